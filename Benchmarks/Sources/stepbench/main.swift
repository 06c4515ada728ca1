import StepBenchCLI
import StepBenchScenarios
import StepPeers

// The peers (what Swift already ships, each an outside design) are measured beside the six
// built-in designs, and each peer's library alone, with no stepper contract (its direct row).
StepBench.main(
    designs: Peers.all,
    directRows: Peers.direct.map { peer, consumer in
        DirectRow(of: peer) { upstream, each, end in consumer.consume(upstream, each: each, end: { _ in end() }) }
    },
    // Each peer's library in a plain program, as its users write it (PlainPrograms).
    plainRows: PlainPrograms.all.map { program in
        PlainRow(of: program.peer) { source, each in
            switch source.value {
            case .sequence(let n): program.onSequence(n, each)
            case .suite(let upstream): program.onUpstream(upstream, each)
            }
        }
    })

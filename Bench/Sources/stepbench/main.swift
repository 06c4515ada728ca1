import StepBenchCLI
import StepPeers

// The peers (what Swift already ships, each an outside design) are measured beside the six
// built-in designs.
StepBench.main(designs: Peers.all)

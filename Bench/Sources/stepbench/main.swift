import StepBenchCLI

StepBench.main(designs: [])

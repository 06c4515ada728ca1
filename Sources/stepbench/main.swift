import StepBenchCLI

StepBench.main()

import StepBenchCLI

StepBench.mainWithExitCodes()

// The whole stepbench tool with the semaphore design beside the six built-ins:
//   semaphore-bench run --design semaphore,atomic --scenario sync-step,floor-sync
//   semaphore-bench profile --design semaphore,atomic
//   semaphore-bench conform --design semaphore
// Its child processes (passes, callgrind, torture cases) run this executable, so they know the
// design too.
import SemaphoreStepping
import StepBenchCLI

StepBench.main(designs: [.semaphore])

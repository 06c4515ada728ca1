// Links the jemalloc options below into every binary that uses StepBenchKit.
const char *stepbench_jemalloc_config(void);

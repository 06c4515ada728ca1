"""StepBench performance reports: REPORT.md and SVG charts from stepbench/1 results files."""

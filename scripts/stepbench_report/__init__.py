"""StepBench performance reports: REPORT.md and SVG charts from results files, as `stepbench read` reads them."""

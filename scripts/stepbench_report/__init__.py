"""StepBench performance reports: REPORT.md and SVG charts from results files, as `stepbench show document` reads them."""

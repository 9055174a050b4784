#pragma once
// The report's charts, drawn by the same code as the planner window (ui/charts) and rendered
// offscreen to SVG and PNG bytes for ui/report/report.h.
#include <vector>

#include "core/errorsim/errorsim_request.h"
#include "core/plan/plan.h"
#include "ui/report/report.h"

namespace quantplan::report {

// Size of every report chart in pixels (fits a 1,100-pixel-wide page, legible when printed).
inline constexpr int kChartWidthPx = 1000;
inline constexpr int kChartHeightPx = 620;

// Batches of the crossover and throughput charts: every power of 2^(1/8) from 1 to 4096, rounded
// to whole sequences and deduplicated, so that the roofline's corners show on a log axis.
std::vector<std::int64_t> chart_batches();

// Renders the crossover (step time), throughput, granularity-vs-error (when `errorsim` is given),
// checkpoint-size and memory charts; `measured` (or nullptr) overlays the crossover and throughput
// charts with measured decode steps. With `capacity` (the --serve planning, with its `slo`): TTFT
// and TPOT against request rate with the SLO lines and each scheme's highest rate, the cost per
// million output tokens per configuration (when one is priced), and the first fitting scheme's
// run over time. Creates an offscreen QApplication when the process has none
// (QT_QPA_PLATFORM=offscreen: no display needed), and keeps LC_NUMERIC at "C" so that numbers in
// every file stay locale-independent. Throws ReportWriteFailed when a chart cannot be rendered,
// Error when another kind of Qt application (QCoreApplication) is running.
// With `disagg` (--disagg): the comparison with aggregated serving, and each sweep given.
std::vector<ReportChart> render_report_charts(const PlanResult& plan, const errorsim::ErrorsimReport* errorsim,
                                             const MeasuredOverlay* measured = nullptr, const serve::CapacityPlan* capacity = nullptr,
                                             const serve::Slo* slo = nullptr, const serve::DisaggComparison* disagg = nullptr,
                                             const serve::DisaggSweep* by_prompt = nullptr, const serve::DisaggSweep* by_tpot = nullptr);

}  // namespace quantplan::report

#pragma once
// The charts of quantplan, shared by the planner window and the headless report (STYLE.md rule 3:
// the GUI and the report draw charts with the same code). Every chart is built from core's results
// only: sweep points, priced schemes, checkpoint budgets, admissions and error-lab ladders. Nothing
// here recomputes a roofline, a byte budget or an error; the only arithmetic is unit conversion for
// display (bytes -> GB, seconds -> ms) and log-log interpolation between sweep points to place a
// marker on a drawn curve.
//
// Ownership: every make_*_chart() returns a new QChart with no parent; the caller owns it (a
// QChartView given the chart takes ownership, as Qt documents for QChartView::setChart).
//
// Series names are part of the contract so that tests and the window can find a series by name
// (see the k*Suffix constants and each function's comment); find_series() looks one up.
#include <cstdint>
#include <optional>
#include <vector>

#include <QtCharts/QChart>
#include <QtCore/QByteArray>
#include <QtCore/QSize>
#include <QtCore/QString>
#include <QtCore/QStringList>

#include "core/plan/measured_overlay.h"
#include "core/plan/plan.h"
#include "core/plan/sweep.h"
#include "core/serve/capacity_plan.h"
#include "core/serve/disagg_plan.h"

QT_BEGIN_NAMESPACE
class QAbstractSeries;
QT_END_NAMESPACE

namespace quantplan::errorsim {
struct LadderRow;  // core/errorsim/error_lab.h
}

namespace quantplan::ui {

// --- Crossover chart --------------------------------------------------------------------------

// What the crossover chart puts on its y axis.
enum class CrossoverMetric {
    StepTimeMs,    // decode step time in milliseconds (SweepPoint::time_s x 1e3)
    TokensPerS,    // decode throughput in tokens per second (SweepPoint::throughput_tokens_per_s)
};

// Display choices for make_crossover_chart().
struct CrossoverChartOptions {
    CrossoverMetric metric = CrossoverMetric::StepTimeMs;
    bool show_ridges = true;       // a marker where each scheme turns compute-bound (PlanResult::ridges)
    bool show_crossovers = true;   // a marker at each numeric crossover (PlanResult::crossovers)
    bool show_cursor = true;       // a vertical line at the plan's requested batch
    QString title;                 // empty: a title naming model, GPU and context
    // Measured decode steps (core's measured_step_points of the same plan, from a --validate
    // calibration file), drawn as points over the predicted curves; empty: none.
    std::vector<MeasuredStepPoint> measured;
};

// Step time (or tokens/s) against batch on a log2 axis, one line per scheme of `plan`, from the
// points of `sweep` (core's batch_sweep of the same plan; points of schemes not in the plan are
// ignored). Series, by name:
//   "<scheme> (p10-p90)"           QAreaSeries, the scheme's error band under an engine profile (sweep
//                                  points with time_low_s/time_high_s), translucent, before its curve,
//                                  not in the legend
//   "<scheme>"                     QLineSeries, the admitted points (batch <= max sequences)
//   "<scheme> (not admitted)"      QLineSeries, dashed, same colour: batches the KV budget refuses
//                                  (joined to the last admitted point so the curve is continuous)
//   "ridge points"                 QScatterSeries, one point per scheme with a ridge inside the
//                                  swept range, at (ridge batch, value interpolated on the curve)
//   "crossovers"                   QScatterSeries, one point per crossover inside the swept range
//   "<scheme> (speculative)"       QLineSeries, dash-dot, same colour: with --spec, the time per output
//                                  token (or tokens/s) speculating at the batches plan.speculation priced
//   "speculation stops paying"     QScatterSeries (with --spec): one point per scheme at the batch where its
//                                  speed-up falls below 1, on its speculative curve
//   "batch B" (the requested batch) QLineSeries of two points spanning the y range: the cursor
//   "<scheme> (measured)"          QScatterSeries of triangles, same colour as the scheme's curve: one
//                                  point per entry of options.measured for that scheme (only when there
//                                  are any); not in the legend, where one empty grey "measured" series
//                                  stands for them all
// Points are (batch, value) with value in the chosen metric's unit.
QChart* make_crossover_chart(const PlanResult& plan, const std::vector<SweepPoint>& sweep,
                             const CrossoverChartOptions& options = {});

// Writes what make_crossover_chart(plan, sweep, options) would draw into `chart`, a chart that
// function made, when it has the same series (kinds and roles, in order): ranges, points, names,
// styles, title and legend entries. Returns false, leaving `chart` as it was, when the series differ (a
// scheme added, markers appearing): then build a new chart. The window's fast path while a
// control is dragged.
bool update_crossover_chart(QChart* chart, const PlanResult& plan, const std::vector<SweepPoint>& sweep,
                            const CrossoverChartOptions& options = {});

// --- Error chart ------------------------------------------------------------------------------

// Display choices for make_error_chart().
struct ErrorChartOptions {
    bool show_heldout = true;      // also draw the layer error on held-out tokens
    QString title;                 // empty: "Granularity vs error"
};

// Layer error and weight error (percent, log axis) per granularity of one error-lab ladder
// (core's errorsim::granularity_ladder), granularities left to right in ladder order.
// `format_label` (e.g. "INT4") prefixes every series name. Series, by name (QLineSeries with
// points at x = row index 0..n-1, y = error x 100):
//   "<label> layer error"            ErrorLabResult::layer_error_calibration
//   "<label> layer error (held-out)" ErrorLabResult::layer_error_heldout (when show_heldout)
//   "<label> weight error"           ErrorLabResult::weight_error, dashed
// With an empty label the names start at "layer error".
QChart* make_error_chart(const std::vector<errorsim::LadderRow>& ladder, const QString& format_label = {},
                         const ErrorChartOptions& options = {});

// The same for several ladders (one per weight format or method) on shared axes; `format_labels`
// names each ladder (same size as `ladders`). The x axis lists every granularity in order of first
// appearance; each row is drawn at its granularity's column (x = column index), so ladders of
// different lengths (NVFP4 runs at g16 only) share the axis.
QChart* make_error_chart(const std::vector<std::vector<errorsim::LadderRow>>& ladders, const QStringList& format_labels,
                         const ErrorChartOptions& options = {});

// --- Checkpoint chart -------------------------------------------------------------------------

// Checkpoint size per scheme in GB (1e9 bytes): stacked bars of quantized payload, scale and
// zero-point metadata and unquantized leftovers (CheckpointBudget), the naive bits/16 expectation
// (CheckpointBudget::naive_bytes) as markers, and `actual_bytes` (a checkpoint's real size, when
// one was inspected) as a horizontal line. Categories are scheme names in plan order. Series:
//   "payload", "metadata", "unquantized"   QBarSets of one QStackedBarSeries (GB per scheme)
//   "naive bits/16"                        QScatterSeries at x = scheme index
//   "actual checkpoint"                    QLineSeries (only with actual_bytes)
QChart* make_checkpoint_chart(const PlanResult& plan, std::optional<std::uint64_t> actual_bytes = std::nullopt);

// --- Memory chart -----------------------------------------------------------------------------

// Which bars the memory chart draws.
enum class MemoryChartView {
    Both,        // two bars per scheme: bytes moved per decode step, and the memory budget
    StepBytes,   // bytes moved per decode step only
    Budget,      // GPU memory budget and the KV cache it leaves only
};

// Display choices for make_memory_chart().
struct MemoryChartOptions {
    MemoryChartView view = MemoryChartView::Both;
    QString title;                 // empty: a title naming GPU, context and batch
};

// Memory per scheme in GB (1e9 bytes), horizontal stacked bars. The "step" bar is one decode
// step's traffic at the scheme's admitted batch (DecodeStep: weight_bytes, kv_bytes,
// activation_bytes); the "memory" bar is the GPU memory per GPU as the engine splits it
// (Admission: resident weights, activation workspace, sampler workspace, runtime overhead, the KV
// cache budget, and the (1 - utilisation) share left to others), its category label giving the
// maximum sequences admitted. Categories: "<scheme> step" and/or "<scheme> memory (max N seq)".
// Bar sets (one QHorizontalStackedBarSeries):
//   "weights read", "KV read", "activations"                                      (step bars)
//   "resident weights", "activation workspace", "sampler workspace",
//   "runtime overhead", "KV cache budget", "not given to the engine"             (memory bars)
// A scheme whose weights do not fit shows a zero KV budget and "does not fit" in its label.
QChart* make_memory_chart(const PlanResult& plan, const MemoryChartOptions& options = {});

// --- Capacity charts ------------------------------------------------------------------------

// The latency a latency-against-rate chart draws.
enum class ServeLatency {
    Ttft,  // time to first token (RatePoint::ttft_s)
    Tpot,  // time per output token (RatePoint::tpot_s)
    E2e,   // end-to-end latency (RatePoint::e2e_s)
};

// Display choices for make_latency_rate_chart().
struct LatencyRateChartOptions {
    ServeLatency metric = ServeLatency::Tpot;
    double quantile = 0.99;              // the percentile drawn: 0.5, 0.9 or 0.99 (p99 above 0.9)
    std::optional<double> slo_s;         // the target on this latency, drawn as a horizontal line
    QString title;                       // empty: a title naming the latency and percentile
};

// One latency percentile (ms) against the request rate (requests/s), one line per
// scheme of `plan` that fits, from each scheme's rate sweep (SchemeCapacity::sweep: Poisson runs
// around its highest rate). Series, by name:
//   "<scheme>"         QLineSeries, (rate, latency at the percentile in ms)
//   "SLO"              QLineSeries of two points across the x range at options.slo_s (only with one)
//   "highest rate"     QScatterSeries: one point per scheme at (its highest rate, the latency there,
//                      interpolated on its curve)
// With no sweep point at all the chart has only a title saying so.
QChart* make_latency_rate_chart(const serve::CapacityPlan& plan, const LatencyRateChartOptions& options = {});

// Cost per million output tokens (USD) of the ranked configurations (CapacityPlan::ranked, the
// first `max_configurations` that have a price), as horizontal bars, the cheapest on top; each
// category reads "<gpu> TP<n> <scheme> x<replicas>". Series: "USD per million output tokens"
// (one QBarSet of a QHorizontalBarSeries). Without a priced configuration, only a title saying so.
QChart* make_capacity_cost_chart(const serve::CapacityPlan& plan, std::size_t max_configurations = 10);

// One run over time: sequences in the batch and requests waiting (left axis), KV-cache use in
// percent (right axis), from a simulator timeline (ServeStats::timeline). Series, by name:
//   "batch", "queue"   QLineSeries, (t in s, count)
//   "KV use (%)"       QLineSeries, (t in s, percent), dashed
//   "accepted (%)"     QLineSeries, dotted, only for a speculative run: the share of each sampled
//                      step's speculative tokens accepted (TimelinePoint::acceptance)
// An empty timeline gives only a title saying so.
QChart* make_timeline_chart(const std::vector<serve::TimelinePoint>& timeline, const QString& title = {});

// --- Disaggregation charts (docs/disaggregation.md) --------------------------------------------

// A disaggregated layout beside aggregated serving on the same GPUs: TTFT p50/p99, TPOT p50/p99
// and E2E p50 in ms on a log axis, one bar set per layout. Series: one QBarSeries of the sets
// "disaggregated (N GPUs)" and "aggregated (R x TP t)" (the latter only when aggregated serving
// fits; the title then says it does not).
QChart* make_disagg_comparison_chart(const serve::DisaggComparison& comparison);

// A sweep (core's sweep_prompt_length or sweep_tpot_slo): the cheapest layout of each kind that
// holds the rate, in USD per hour when every layout has a price (else GPUs), against the prompt
// length (log2 axis) or the TPOT SLO (ms, log axis). Series, by name:
//   "disaggregated", "aggregated"        QLineSeries, the points where that layout holds
//   "disaggregation pays from here"      QLineSeries of two points: the sweep's crossover (when any)
// With no point holding, only a title saying so.
QChart* make_disagg_sweep_chart(const serve::DisaggSweep& sweep);

// --- Lookup and export ------------------------------------------------------------------------

// The series of `chart` named `name`, or nullptr.
QAbstractSeries* find_series(const QChart* chart, const QString& name);

// Renders `chart` offscreen at `size` pixels (device-independent) and writes a PNG to `path`
// atomically (temporary file + rename). A chart already shown in a view is rendered from its
// scene at its current geometry, scaled to `size`; a chart in no scene is laid out at `size` in a
// temporary scene and left outside any scene afterwards. Needs a QApplication (the offscreen
// platform is enough). Returns false when rendering or writing fails; the target is then untouched.
bool save_chart_png(QChart* chart, const QString& path, QSize size);

// The same as save_chart_png() but writes SVG through QSvgGenerator, with `size` as the SVG's
// width, height and viewBox.
bool save_chart_svg(QChart* chart, const QString& path, QSize size);

// The PNG and SVG bytes without writing a file (the report embeds them; tests check them).
// Empty on failure.
QByteArray render_chart_png(QChart* chart, QSize size);
QByteArray render_chart_svg(QChart* chart, QSize size);

}  // namespace quantplan::ui

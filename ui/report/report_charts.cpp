#include "ui/report/report_charts.h"

#include <clocale>
#include <cmath>
#include <memory>
#include <set>
#include <tuple>

#include <QtCore/QByteArray>
#include <QtWidgets/QApplication>

#include "core/errorsim/error_lab.h"
#include "core/plan/sweep.h"
#include "ui/charts/charts.h"
#include "ui/report/report_folder.h"

namespace quantplan::report {
namespace {

// Steps per octave of the chart batches: fine enough that a piecewise-linear curve through the
// points looks like the model's max() of two lines on a log axis.
constexpr int kBatchStepsPerOctave = 8;

// Qt's offscreen platform warns that XDG_RUNTIME_DIR is unset (it is, on a server); that warning
// says nothing about the report, so it is dropped; every other message goes to Qt's default.
QtMessageHandler previous_handler = nullptr;
void quiet_handler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type == QtWarningMsg && message.startsWith(QStringLiteral("QStandardPaths: XDG_RUNTIME_DIR"))) return;
    if (previous_handler) previous_handler(type, context, message);
}

// A QApplication for this call when the process has none (the command line); the tests and the
// window bring their own.
class OffscreenApplication {
public:
    OffscreenApplication() {
        if (QCoreApplication::instance() != nullptr) {
            if (qobject_cast<QApplication*>(QCoreApplication::instance()) == nullptr)
                throw Error("--out", "charts need a QApplication, and another kind of Qt application is running");
            return;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");
        previous_handler = qInstallMessageHandler(quiet_handler);
        app_ = std::make_unique<QApplication>(argc_, argv_);
        // QCoreApplication sets the C locale from the environment (Qt docs); numbers written with
        // printf-style formatting must not follow it.
        std::setlocale(LC_NUMERIC, "C");
    }
    ~OffscreenApplication() {
        if (app_) {
            app_.reset();
            qInstallMessageHandler(previous_handler);
        }
    }
    OffscreenApplication(const OffscreenApplication&) = delete;
    OffscreenApplication& operator=(const OffscreenApplication&) = delete;

private:
    int argc_ = 1;
    char name_[10] = "quantplan";
    char* argv_[2] = {name_, nullptr};
    std::unique_ptr<QApplication> app_;
};

std::string bytes_of(const QByteArray& a) { return std::string(a.constData(), static_cast<std::size_t>(a.size())); }

ReportChart render(QChart* chart_raw, std::string name, std::string caption) {
    std::unique_ptr<QChart> chart(chart_raw);
    const QSize size(kChartWidthPx, kChartHeightPx);
    ReportChart out;
    out.name = std::move(name);
    out.title = chart->title().toStdString();
    out.caption = std::move(caption);
    out.width_px = kChartWidthPx;
    out.height_px = kChartHeightPx;
    out.svg = bytes_of(ui::render_chart_svg(chart.get(), size));
    out.png = bytes_of(ui::render_chart_png(chart.get(), size));
    if (out.svg.empty() || out.png.empty()) throw ReportWriteFailed("charts/" + out.name, "the chart could not be rendered");
    return out;
}

// The error lab's rows as ladders, one per (format, method) in first-appearance order.
void ladders_of(const errorsim::ErrorsimReport& report, std::vector<std::vector<errorsim::LadderRow>>& ladders,
                QStringList& labels) {
    std::set<std::string> methods;
    for (const errorsim::ErrorsimRow& r : report.rows) methods.insert(r.method);
    std::vector<std::string> keys;
    for (const errorsim::ErrorsimRow& r : report.rows) {
        const std::string key = methods.size() > 1 ? r.format + " " + r.method : r.format;
        std::size_t i = 0;
        while (i < keys.size() && keys[i] != key) ++i;
        if (i == keys.size()) {
            keys.push_back(key);
            ladders.emplace_back();
            labels << QString::fromStdString(key);
        }
        ladders[i].push_back({r.granularity, r.weights.group, r.result});
    }
}

}  // namespace

std::vector<std::int64_t> chart_batches() {
    std::vector<std::int64_t> batches;
    for (int step = 0; step <= 12 * kBatchStepsPerOctave; ++step) {
        const auto b = static_cast<std::int64_t>(std::llround(std::exp2(static_cast<double>(step) / kBatchStepsPerOctave)));
        if (batches.empty() || b > batches.back()) batches.push_back(b);
    }
    return batches;
}

std::vector<ReportChart> render_report_charts(const PlanResult& plan, const errorsim::ErrorsimReport* errorsim,
                                             const MeasuredOverlay* measured, const serve::CapacityPlan* capacity, const serve::Slo* slo,
                                             const serve::DisaggComparison* disagg, const serve::DisaggSweep* by_prompt, const serve::DisaggSweep* by_tpot) {
    OffscreenApplication app;
    std::vector<ReportChart> charts;
    const std::vector<SweepPoint> sweep = batch_sweep(plan, chart_batches());
    const std::string context = std::to_string(plan.request.workload.context_tokens);

    ui::CrossoverChartOptions step_time;
    const bool has_measured = measured != nullptr && !measured->points.empty();
    if (has_measured) step_time.measured = measured->points;
    const std::string measured_caption =
        has_measured ? " Triangles are measured decode steps: the roofline step with its decoder linears as the calibration timed them." : "";
    charts.push_back(render(ui::make_crossover_chart(plan, sweep, step_time), "crossover",
                            "Decode step time against batch at context " + context +
                                " for every scheme (log-log). Squares mark where a scheme turns compute-bound, red dots "
                                "where two schemes swap order; the dotted line is the requested batch; dashed segments are "
                                "batches the KV-cache budget does not admit." + measured_caption));
    ui::CrossoverChartOptions throughput = step_time;
    throughput.metric = ui::CrossoverMetric::TokensPerS;
    charts.push_back(render(ui::make_crossover_chart(plan, sweep, throughput), "throughput",
                            "Decode throughput (tokens/s, all sequences together) against batch at context " + context +
                                ": the same sweep as the step-time chart." + measured_caption));
    if (errorsim != nullptr && !errorsim->rows.empty()) {
        std::vector<std::vector<errorsim::LadderRow>> ladders;
        QStringList labels;
        ladders_of(*errorsim, ladders, labels);
        ui::ErrorChartOptions options;
        options.title = QStringLiteral("Granularity vs error: one %1 x %2 layer (%3)")
                            .arg(errorsim->out_features)
                            .arg(errorsim->in_features)
                            .arg(QString::fromStdString(errorsim->source));
        charts.push_back(render(ui::make_error_chart(ladders, labels, options), "error",
                                "Relative error of one quantized layer against the scale granularity (error lab, " +
                                    errorsim->source + "): layer output error on the calibration tokens (solid), on held-out "
                                    "tokens (dotted) and weight error (dashed)."));
    }
    charts.push_back(render(ui::make_checkpoint_chart(plan), "checkpoint",
                            "Checkpoint size per scheme: quantized payload, scale and zero-point metadata, and the tensors "
                            "left unquantized, against the naive bits/16 expectation (red squares)."));
    charts.push_back(render(ui::make_memory_chart(plan), "memory",
                            "Per scheme: the bytes one decode step reads (weights, KV cache, activations) and how the "
                            "engine splits the GPU's memory, leaving the KV-cache budget that decides the maximum sequences."));
    if (capacity != nullptr) {
        const serve::Slo none;
        const serve::Slo& targets = slo != nullptr ? *slo : none;
        for (const auto& [metric, target, name, what] :
             {std::tuple{ui::ServeLatency::Ttft, targets.ttft, "capacity-ttft", "time to first token"},
              std::tuple{ui::ServeLatency::Tpot, targets.tpot, "capacity-tpot", "time per output token"}}) {
            ui::LatencyRateChartOptions o;
            o.metric = metric;
            o.quantile = target ? target->quantile : 0.99;
            if (target) o.slo_s = target->seconds;
            charts.push_back(render(ui::make_latency_rate_chart(*capacity, o), name,
                                    std::string("The ") + what + " percentile against the Poisson request rate, per scheme, from simulated runs "
                                    "around each scheme's highest rate (black squares: the highest rate one replica sustains within the SLOs"
                                    " with a stable queue)" + (target ? "; the dashed red line is the SLO." : "; no SLO on it was given.")));
        }
        bool priced = false;
        for (const serve::Configuration& c : capacity->ranked) priced = priced || c.cost_output.has_value();
        if (priced)
            charts.push_back(render(ui::make_capacity_cost_chart(*capacity), "capacity-cost",
                                    "USD per million output tokens of the ten cheapest configurations (GPU, TP, scheme, replicas) "
                                    "that carry the target rate within the SLOs, at the bundled or given GPU prices."));
        for (const serve::SchemeCapacity& s : capacity->schemes) {
            if (!s.fits || s.stats.timeline.empty()) continue;
            charts.push_back(render(ui::make_timeline_chart(s.stats.timeline, QStringLiteral("%1: one run over time").arg(QString::fromStdString(s.name))),
                                    "capacity-timeline",
                                    "The run of " + s.name + " as the capacity table shows it: sequences in the batch and requests "
                                    "waiting (left axis), and the share of KV-cache blocks in use (right axis), at the start of "
                                    "each step (thinned to a few hundred points)."));
            break;
        }
    }
    if (disagg != nullptr) {
        charts.push_back(render(ui::make_disagg_comparison_chart(*disagg), "disagg",
                                "The disaggregated layout against aggregated serving on the same GPUs, the same traffic: TTFT and TPOT "
                                "percentiles and the E2E median in ms (log axis). Splitting removes the prefill chunks from the decode "
                                "steps (TPOT) and adds the KV transfer and the decode pool's admission to TTFT."));
        for (const auto& [sweep, name, what] : {std::tuple{by_prompt, "disagg-prompt", "prompt length (the output length, rate and SLOs as given)"},
                                                std::tuple{by_tpot, "disagg-tpot", "TPOT SLO (the traffic and the other SLOs as given)"}})
            if (sweep != nullptr)
                charts.push_back(render(ui::make_disagg_sweep_chart(*sweep), name,
                                        std::string("The cheapest disaggregated and aggregated layouts that hold the rate (the search's pools, "
                                                    "sized again at each point) against the ") +
                                            what + "; the dashed red line marks where disaggregation starts to pay at every later point."));
    }
    return charts;
}

}  // namespace quantplan::report

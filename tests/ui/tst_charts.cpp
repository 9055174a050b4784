// The shared charts: each chart's series carry core's numbers (nothing recomputed), and each
// renders offscreen to a valid PNG and SVG of the requested size. The rendered files are left in
// the build directory (charts-out/) to be looked at.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtGui/QImage>
#include <QtSvg/QSvgRenderer>

#include "app/cli_options.h"
#include "app/headless.h"
#include "core/plan/measured_overlay.h"
#include "core/plan/sweep.h"
#include "tests/support/synthetic_calibration.h"
#include "ui/charts/charts.h"

using namespace quantplan;

namespace {

// Relative tolerance for values that went through one unit conversion (bytes / 1e9, s x 1e3):
// a few ulps of double rounding.
constexpr double kConversionRelTol = 1e-12;

// Bytes per GB and ms per s as the charts document them (charts.h).
constexpr double kBytesPerGb = 1e9;
constexpr double kMsPerS = 1e3;

// Where rendered charts are written for inspection.
std::filesystem::path output_dir() {
    const std::filesystem::path dir = std::filesystem::current_path() / "charts-out";
    std::filesystem::create_directories(dir);
    return dir;
}

// The plan of the default model and GPU at `batch` and `context`, on the realistic roofline (the
// charts' expected figures are the seeds').
PlanResult default_plan(std::int64_t batch, std::int64_t context) {
    app::CliOptions o;
    o.profile = "realistic";
    o.batch = batch;
    o.context = context;
    return plan(app::plan_request_from_options(o));
}

bool close(double expected, double actual) {
    return std::fabs(expected - actual) <= kConversionRelTol * std::max(std::fabs(expected), 1e-300);
}

template <class Series>
Series* series_named(QChart* chart, const QString& name) {
    auto* s = qobject_cast<Series*>(ui::find_series(chart, name));
    BOOST_TEST_INFO("series " << name.toStdString());
    BOOST_REQUIRE(s != nullptr);
    return s;
}

QBarSet* bar_set_named(const QList<QBarSet*>& sets, const QString& label) {
    for (QBarSet* s : sets)
        if (s->label() == label) return s;
    BOOST_TEST_INFO("bar set " << label.toStdString());
    BOOST_FAIL("no such bar set");
    return nullptr;
}

// Renders `chart` to PNG and SVG at `size`, checks both decode at that size, and keeps the files.
void check_renders(QChart* chart, const std::string& stem, QSize size) {
    const QString png_path = QString::fromStdString((output_dir() / (stem + ".png")).string());
    const QString svg_path = QString::fromStdString((output_dir() / (stem + ".svg")).string());
    BOOST_REQUIRE(ui::save_chart_png(chart, png_path, size));
    BOOST_REQUIRE(ui::save_chart_svg(chart, svg_path, size));
    const QImage image(png_path);
    BOOST_REQUIRE(!image.isNull());
    BOOST_TEST(image.width() == size.width());
    BOOST_TEST(image.height() == size.height());
    // Not a blank canvas: a rendered chart has many distinct colours (text, lines, bars).
    int non_white = 0;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7)
            if (image.pixel(x, y) != qRgb(255, 255, 255)) ++non_white;
    BOOST_TEST(non_white > 200);
    QSvgRenderer svg(svg_path);
    BOOST_REQUIRE(svg.isValid());
    BOOST_TEST(svg.defaultSize().width() == size.width());
    BOOST_TEST(svg.defaultSize().height() == size.height());
    // The chart is free again afterwards (the temporary scene let it go).
    BOOST_TEST(chart->scene() == nullptr);
}

const QSize kSize(1000, 620);

}  // namespace

BOOST_AUTO_TEST_SUITE(charts)

BOOST_AUTO_TEST_CASE(crossover_series_are_cores_sweep) {
    // Seed 003's walk: context 128, where every scheme turns compute-bound inside 1..4096 and
    // admission stops short of 4096 sequences.
    const PlanResult p = default_plan(64, 128);
    const std::vector<SweepPoint> sweep = batch_sweep(p, powers_of_two(1, 4096));
    std::unique_ptr<QChart> chart(ui::make_crossover_chart(p, sweep));
    for (const SchemeResult& r : p.schemes) {
        const QString name = QString::fromStdString(scheme_name(r.costs.scheme));
        auto* admitted = series_named<QLineSeries>(chart.get(), name);
        auto* refused = series_named<QLineSeries>(chart.get(), name + " (not admitted)");
        int a = 0, n = 0;
        for (const SweepPoint& s : sweep) {
            if (s.scheme != scheme_name(r.costs.scheme)) continue;
            QLineSeries* series = s.admitted ? admitted : refused;
            // The refused curve starts at the last admitted point (continuity), then its own points.
            const int index = s.admitted ? a++ : (admitted->count() > 0 ? 1 : 0) + n++;
            BOOST_REQUIRE(index < series->count());
            BOOST_TEST(series->at(index).x() == static_cast<double>(s.batch));
            BOOST_TEST(close(s.time_s * kMsPerS, series->at(index).y()), "expected " << s.time_s * kMsPerS << " ms, got "
                                                                                      << series->at(index).y());
        }
        BOOST_TEST(admitted->count() == a);
        // The admission limit of this plan is inside the swept range: both parts are drawn.
        BOOST_TEST(a > 0);
        BOOST_TEST(n > 0);
        BOOST_TEST(admitted->at(a - 1).x() <= static_cast<double>(r.admission.max_sequences));
    }
    // Ridge markers sit at core's ridge batches; crossovers at core's crossover batches.
    auto* ridges = series_named<QScatterSeries>(chart.get(), "ridge points");
    int in_range = 0;
    for (const RidgeInfo& r : p.ridges)
        if (std::isfinite(r.batch) && r.batch >= 1 && r.batch <= 4096) {
            BOOST_REQUIRE(in_range < ridges->count());
            BOOST_TEST(ridges->at(in_range++).x() == r.batch);
        }
    BOOST_TEST(ridges->count() == in_range);
    BOOST_TEST(in_range > 0);
    auto* crossings = series_named<QScatterSeries>(chart.get(), "crossovers");
    int c_in_range = 0;
    for (const Crossover& c : p.crossovers)
        if (c.batch >= 1 && c.batch <= 4096) {
            BOOST_REQUIRE(c_in_range < crossings->count());
            BOOST_TEST(crossings->at(c_in_range++).x() == c.batch);
        }
    BOOST_TEST(crossings->count() == c_in_range);
    auto* cursor = series_named<QLineSeries>(chart.get(), "batch 64");
    BOOST_REQUIRE(cursor->count() == 2);
    BOOST_TEST(cursor->at(0).x() == 64.0);
    check_renders(chart.get(), "crossover", kSize);
}

// update_crossover_chart writes into an existing chart exactly what a new chart would show, and
// refuses (leaving the chart alone) when the series differ.
BOOST_AUTO_TEST_CASE(crossover_updates_in_place_as_a_new_chart_would_draw) {
    const PlanResult a = default_plan(1, 4096);
    const PlanResult b = default_plan(300, 128);  // other batch, context, admission, ridges, crossovers
    const std::vector<SweepPoint> sweep_a = batch_sweep(a, powers_of_two(1, 4096));
    const std::vector<SweepPoint> sweep_b = batch_sweep(b, powers_of_two(1, 4096));
    std::unique_ptr<QChart> shown(ui::make_crossover_chart(a, sweep_a));
    std::unique_ptr<QChart> fresh(ui::make_crossover_chart(b, sweep_b));
    const QList<QAbstractSeries*> before = shown->series();
    // Marker series exist (empty, out of the legend) even with nothing to mark: the same structure.
    BOOST_TEST_REQUIRE(shown->series().size() == fresh->series().size());
    BOOST_TEST_REQUIRE(ui::update_crossover_chart(shown.get(), b, sweep_b));
    BOOST_TEST(shown->series() == before);  // the same objects, updated
    BOOST_TEST(shown->title() == fresh->title());
    for (int i = 0; i < 2; ++i) {
        auto* x = qobject_cast<QLogValueAxis*>(shown->axes()[i]);
        auto* y = qobject_cast<QLogValueAxis*>(fresh->axes()[i]);
        BOOST_TEST(x->min() == y->min());
        BOOST_TEST(x->max() == y->max());
    }
    for (qsizetype i = 0; i < fresh->series().size(); ++i) {
        auto* x = qobject_cast<QXYSeries*>(shown->series()[i]);
        auto* y = qobject_cast<QXYSeries*>(fresh->series()[i]);
        BOOST_TEST_INFO(y->name().toStdString());
        BOOST_TEST(x->name() == y->name());
        BOOST_TEST((x->points() == y->points()));
        BOOST_TEST((x->pen() == y->pen()));
        const QList<QLegendMarker*> mx = shown->legend()->markers(x), my = fresh->legend()->markers(y);
        BOOST_TEST(mx.size() == my.size());
        if (!mx.isEmpty() && !my.isEmpty()) BOOST_TEST(mx.front()->isVisible() == my.front()->isVisible());
    }
    // Another scheme list is another structure.
    app::CliOptions o;
    o.profile = "realistic";
    o.schemes = "bf16,w4a16-g128";
    const PlanResult two = plan(app::plan_request_from_options(o));
    BOOST_TEST(!ui::update_crossover_chart(shown.get(), two, batch_sweep(two, powers_of_two(1, 4096))));
    BOOST_TEST(shown->series() == before);
}

BOOST_AUTO_TEST_CASE(crossover_tokens_per_s_metric) {
    const PlanResult p = default_plan(8, 2048);
    const std::vector<SweepPoint> sweep = batch_sweep(p, powers_of_two(1, 1024));
    ui::CrossoverChartOptions options;
    options.metric = ui::CrossoverMetric::TokensPerS;
    std::unique_ptr<QChart> chart(ui::make_crossover_chart(p, sweep, options));
    const QString name = QString::fromStdString(scheme_name(p.schemes.front().costs.scheme));
    auto* first = series_named<QLineSeries>(chart.get(), name);
    BOOST_REQUIRE(first->count() > 0);
    BOOST_TEST(close(sweep.front().throughput_tokens_per_s, first->at(0).y()));
    check_renders(chart.get(), "crossover-tokens", QSize(800, 500));
}

// Measured decode steps (core's measured_step_points) are drawn as they are: one scatter series per
// scheme that has points, the values in the chart's unit, nothing for schemes without a kernel.
BOOST_AUTO_TEST_CASE(crossover_overlays_measured_points) {
    const PlanResult p = default_plan(1, 4096);
    const Calibration cal = test::synthetic_calibration(p.request.model, p.request.gpu, p.request.efficiency, {{"w4a16_fused", 1.3}});
    const MeasuredOverlay overlay = measured_step_points(cal, p);
    BOOST_TEST_REQUIRE(!overlay.points.empty());
    const std::vector<SweepPoint> sweep = batch_sweep(p, powers_of_two(1, 4096));
    ui::CrossoverChartOptions options;
    options.measured = overlay.points;
    std::unique_ptr<QChart> chart(ui::make_crossover_chart(p, sweep, options));
    std::set<std::string> with_points;
    for (const MeasuredStepPoint& m : overlay.points) with_points.insert(m.scheme);
    for (const SchemeResult& r : p.schemes) {
        const std::string name = scheme_name(r.costs.scheme);
        const QString series = QString::fromStdString(name) + QStringLiteral(" (measured)");
        if (!with_points.count(name)) {
            BOOST_TEST(ui::find_series(chart.get(), series) == nullptr, name);
            continue;
        }
        auto* s = series_named<QScatterSeries>(chart.get(), series);
        std::vector<const MeasuredStepPoint*> mine;
        for (const MeasuredStepPoint& m : overlay.points)
            if (m.scheme == name) mine.push_back(&m);
        BOOST_TEST_REQUIRE(static_cast<std::size_t>(s->count()) == mine.size());
        for (int i = 0; i < s->count(); ++i) {
            BOOST_TEST(s->at(i).x() == static_cast<double>(mine[i]->batch));
            BOOST_TEST(close(mine[i]->measured_step_s * kMsPerS, s->at(i).y()));
        }
    }
    // The slowed W4A16 points sit above its curve; bf16's (run as predicted) on it.
    auto* w4 = series_named<QScatterSeries>(chart.get(), QStringLiteral("w4a16-g128 (measured)"));
    auto* w4_curve = series_named<QLineSeries>(chart.get(), QStringLiteral("w4a16-g128"));
    BOOST_TEST(w4->at(0).y() > w4_curve->at(0).y() * 1.1);
    auto* bf = series_named<QScatterSeries>(chart.get(), QStringLiteral("bf16 (measured)"));
    auto* bf_curve = series_named<QLineSeries>(chart.get(), QStringLiteral("bf16"));
    BOOST_TEST(std::fabs(bf->at(0).y() / bf_curve->at(0).y() - 1.0) < 1e-9);
    check_renders(chart.release(), "crossover-measured-synthetic", {1000, 620});
}

BOOST_AUTO_TEST_CASE(checkpoint_bars_are_cores_budget) {
    const PlanResult p = default_plan(1, 4096);
    const std::uint64_t actual_bytes = 6'100'000'000ull;
    std::unique_ptr<QChart> chart(ui::make_checkpoint_chart(p, actual_bytes));
    QStackedBarSeries* bars = nullptr;
    for (QAbstractSeries* s : chart->series())
        if (auto* b = qobject_cast<QStackedBarSeries*>(s)) bars = b;
    BOOST_REQUIRE(bars != nullptr);
    QBarSet* payload = bar_set_named(bars->barSets(), "payload");
    QBarSet* metadata = bar_set_named(bars->barSets(), "metadata");
    QBarSet* unquantized = bar_set_named(bars->barSets(), "unquantized");
    auto* naive = series_named<QScatterSeries>(chart.get(), "naive bits/16");
    BOOST_REQUIRE(payload->count() == static_cast<int>(p.schemes.size()));
    BOOST_REQUIRE(naive->count() == static_cast<int>(p.schemes.size()));
    for (std::size_t i = 0; i < p.schemes.size(); ++i) {
        const CheckpointBudget& b = p.schemes[i].costs.budget;
        const int k = static_cast<int>(i);
        BOOST_TEST(close(static_cast<double>(b.quantized_payload_bytes) / kBytesPerGb, payload->at(k)));
        BOOST_TEST(close(static_cast<double>(b.metadata_bytes) / kBytesPerGb, metadata->at(k)));
        BOOST_TEST(close(static_cast<double>(b.unquantized_bytes) / kBytesPerGb, unquantized->at(k)));
        BOOST_TEST(close(b.naive_bytes / kBytesPerGb, naive->at(k).y()));
        // The three parts add up to the checkpoint core priced.
        BOOST_TEST(std::fabs(payload->at(k) + metadata->at(k) + unquantized->at(k) -
                             static_cast<double>(b.checkpoint_bytes) / kBytesPerGb) < 1e-9);
    }
    auto* actual = series_named<QLineSeries>(chart.get(), "actual checkpoint");
    BOOST_TEST(close(6.1, actual->at(0).y()));
    // Without a real size there is no such series.
    std::unique_ptr<QChart> without(ui::make_checkpoint_chart(p, std::nullopt));
    BOOST_TEST(ui::find_series(without.get(), "actual checkpoint") == nullptr);
    check_renders(chart.get(), "checkpoint", kSize);
}

BOOST_AUTO_TEST_CASE(memory_bars_are_cores_step_and_admission) {
    const PlanResult p = default_plan(32, 8192);
    std::unique_ptr<QChart> chart(ui::make_memory_chart(p));
    QHorizontalStackedBarSeries* bars = nullptr;
    for (QAbstractSeries* s : chart->series())
        if (auto* b = qobject_cast<QHorizontalStackedBarSeries*>(s)) bars = b;
    BOOST_REQUIRE(bars != nullptr);
    const int n = static_cast<int>(p.schemes.size());
    QBarSet* weights_read = bar_set_named(bars->barSets(), "weights read");
    QBarSet* kv_read = bar_set_named(bars->barSets(), "KV read");
    QBarSet* kv_budget = bar_set_named(bars->barSets(), "KV cache budget");
    QBarSet* resident = bar_set_named(bars->barSets(), "resident weights");
    BOOST_REQUIRE(weights_read->count() == 2 * n);
    // Rows are drawn bottom-up: scheme i's step bar is row 2n-1-2i, its memory bar 2n-2-2i.
    for (int i = 0; i < n; ++i) {
        const SchemeResult& r = p.schemes[static_cast<std::size_t>(i)];
        const int step_row = 2 * n - 1 - 2 * i, memory_row = 2 * n - 2 - 2 * i;
        BOOST_TEST(close(static_cast<double>(r.decode.weight_bytes) / kBytesPerGb, weights_read->at(step_row)));
        BOOST_TEST(close(static_cast<double>(r.decode.kv_bytes) / kBytesPerGb, kv_read->at(step_row)));
        BOOST_TEST(weights_read->at(memory_row) == 0.0);
        BOOST_TEST(close(static_cast<double>(r.admission.weight_bytes) / kBytesPerGb, resident->at(memory_row)));
        BOOST_TEST(close(static_cast<double>(r.admission.budget_bytes) / kBytesPerGb, kv_budget->at(memory_row)));
    }
    BOOST_TEST(ui::find_series(chart.get(), "usable GPU memory") != nullptr);
    check_renders(chart.get(), "memory", kSize);

    ui::MemoryChartOptions budget_only;
    budget_only.view = ui::MemoryChartView::Budget;
    std::unique_ptr<QChart> budget(ui::make_memory_chart(p, budget_only));
    for (QAbstractSeries* s : budget->series())
        if (auto* b = qobject_cast<QHorizontalStackedBarSeries*>(s)) {
            for (QBarSet* set : b->barSets()) {
                BOOST_TEST(set->label().toStdString() != "weights read");
                BOOST_TEST(set->count() == n);
            }
        }
}

namespace {

// A capacity plan with known numbers: two schemes with rate sweeps, one that does not fit, two
// ranked configurations (one priced) and a short timeline.
serve::CapacityPlan synthetic_capacity() {
    serve::CapacityPlan plan;
    for (int k = 0; k < 2; ++k) {
        serve::SchemeCapacity s;
        s.name = k == 0 ? "bf16" : "w4a16-g128";
        s.fits = true;
        s.max_rate = 4.0 + k;
        for (int i = 1; i <= 5; ++i) {
            serve::RatePoint p;
            p.rate_per_s = i * (1.0 + 0.25 * k);
            p.tpot_s.p99 = 0.010 + 0.002 * i + 0.001 * k;
            p.tpot_s.p90 = 0.009 + 0.002 * i;
            p.ttft_s.p99 = 0.2 * i;
            s.sweep.push_back(p);
        }
        plan.schemes.push_back(s);
    }
    serve::SchemeCapacity none;
    none.name = "bf16-tp1";
    none.fits = false;
    plan.schemes.push_back(none);
    serve::Configuration a;
    a.gpu = "h200";
    a.scheme = "bf16";
    a.tp = 1;
    a.replicas = 3;
    a.gpus = 3;
    a.max_rate = 7;
    a.usd_per_hour = 11.97;
    a.cost_output = 0.125;
    plan.ranked.push_back(a);
    serve::Configuration b = a;
    b.gpu = "h20";
    b.usd_per_hour.reset();
    b.cost_output.reset();
    plan.ranked.push_back(b);
    plan.schemes[0].stats.timeline = {{0.0, 1, 0, 0.01, 0}, {0.5, 12, 3, 0.4, 0}, {1.0, 16, 9, 0.97, 2}, {1.5, 4, 0, 0.2, 2}};
    return plan;
}

}  // namespace

BOOST_AUTO_TEST_CASE(capacity_charts_are_cores_runs) {
    const serve::CapacityPlan plan = synthetic_capacity();
    ui::LatencyRateChartOptions o;
    o.metric = ui::ServeLatency::Tpot;
    o.quantile = 0.99;
    o.slo_s = 0.05;
    std::unique_ptr<QChart> chart(ui::make_latency_rate_chart(plan, o));
    for (int k = 0; k < 2; ++k) {
        const serve::SchemeCapacity& s = plan.schemes[static_cast<std::size_t>(k)];
        auto* line = series_named<QLineSeries>(chart.get(), QString::fromStdString(s.name));
        BOOST_REQUIRE(line->count() == 5);
        for (int i = 0; i < 5; ++i) {
            BOOST_TEST(close(s.sweep[static_cast<std::size_t>(i)].rate_per_s, line->at(i).x()));
            BOOST_TEST(close(s.sweep[static_cast<std::size_t>(i)].tpot_s.p99 * kMsPerS, line->at(i).y()));
        }
    }
    BOOST_TEST(ui::find_series(chart.get(), "bf16-tp1") == nullptr);  // does not fit: no curve
    auto* slo = series_named<QLineSeries>(chart.get(), "SLO");
    BOOST_TEST(close(50.0, slo->at(0).y()));
    auto* marks = series_named<QScatterSeries>(chart.get(), "highest rate");
    BOOST_REQUIRE(marks->count() == 2);
    BOOST_TEST(close(4.0, marks->at(0).x()));
    BOOST_TEST(close(5.0, marks->at(1).x()));
    // bf16's highest rate, 4, is its fourth sweep point: the marker sits on it.
    BOOST_TEST(std::fabs(marks->at(0).y() - plan.schemes[0].sweep[3].tpot_s.p99 * kMsPerS) < 1e-9);
    check_renders(chart.get(), "capacity-tpot", kSize);
    // p90 draws the p90 column.
    o.quantile = 0.9;
    o.slo_s.reset();
    std::unique_ptr<QChart> p90(ui::make_latency_rate_chart(plan, o));
    BOOST_TEST(close(plan.schemes[0].sweep[0].tpot_s.p90 * kMsPerS, series_named<QLineSeries>(p90.get(), "bf16")->at(0).y()));
    BOOST_TEST(ui::find_series(p90.get(), "SLO") == nullptr);

    // Cost: only priced configurations, as core ranked them.
    std::unique_ptr<QChart> cost(ui::make_capacity_cost_chart(plan));
    QHorizontalBarSeries* bars = nullptr;
    for (QAbstractSeries* s : cost->series())
        if (auto* b = qobject_cast<QHorizontalBarSeries*>(s)) bars = b;
    BOOST_REQUIRE(bars != nullptr);
    QBarSet* usd = bar_set_named(bars->barSets(), "USD per million output tokens");
    BOOST_REQUIRE(usd->count() == 1);
    BOOST_TEST(close(0.125, usd->at(0)));
    check_renders(cost.get(), "capacity-cost", kSize);

    // Timeline: batch, queue and KV use in percent.
    std::unique_ptr<QChart> tl(ui::make_timeline_chart(plan.schemes[0].stats.timeline));
    auto* batch = series_named<QLineSeries>(tl.get(), "batch");
    auto* queue = series_named<QLineSeries>(tl.get(), "queue");
    auto* kv = series_named<QLineSeries>(tl.get(), "KV use (%)");
    BOOST_REQUIRE(batch->count() == 4);
    BOOST_TEST(batch->at(2).y() == 16.0);
    BOOST_TEST(queue->at(2).y() == 9.0);
    BOOST_TEST(close(97.0, kv->at(2).y()));
    check_renders(tl.get(), "capacity-timeline", kSize);

    // Nothing to draw: a title that says so, no series.
    std::unique_ptr<QChart> empty(ui::make_latency_rate_chart(serve::CapacityPlan{}));
    BOOST_TEST(empty->series().isEmpty());
    BOOST_TEST(empty->title().contains("no scheme"));
    std::unique_ptr<QChart> no_price(ui::make_capacity_cost_chart(serve::CapacityPlan{}));
    BOOST_TEST(no_price->title().contains("no configuration has a price"));
}

BOOST_AUTO_TEST_CASE(bad_render_arguments_fail_cleanly) {
    const PlanResult p = default_plan(1, 4096);
    std::unique_ptr<QChart> chart(ui::make_checkpoint_chart(p));
    BOOST_TEST(ui::render_chart_png(nullptr, kSize).isEmpty());
    BOOST_TEST(ui::render_chart_png(chart.get(), QSize(0, 10)).isEmpty());
    BOOST_TEST(ui::render_chart_svg(chart.get(), QSize(-1, 10)).isEmpty());
    // A path in a folder that does not exist: false, nothing written.
    const std::filesystem::path missing = output_dir() / "no-such-folder" / "chart.png";
    BOOST_TEST(!ui::save_chart_png(chart.get(), QString::fromStdString(missing.string()), kSize));
    BOOST_TEST(!std::filesystem::exists(missing));
}

BOOST_AUTO_TEST_SUITE_END()

// The batch-size crossover chart: core's sweep points per scheme on log-log axes, with the ridge
// points, crossovers, admission limit and requested batch of the plan.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtGui/QPen>

#include "ui/charts/chart_style.h"
#include "ui/charts/charts.h"

namespace quantplan::ui {
namespace {

// Room above the highest curve, as a factor on a log axis (keeps point labels inside the plot).
constexpr double kHeadroom = 1.4;

// The value a sweep point contributes on the y axis.
double metric_value(const SweepPoint& p, CrossoverMetric metric) {
    return metric == CrossoverMetric::StepTimeMs ? p.time_s * detail::kMsPerS : p.throughput_tokens_per_s;
}

// The value a measured step contributes on the y axis.
double measured_value(const MeasuredStepPoint& p, CrossoverMetric metric) {
    if (metric == CrossoverMetric::StepTimeMs) return p.measured_step_s * detail::kMsPerS;
    return p.measured_step_s > 0 ? static_cast<double>(p.batch) / p.measured_step_s : 0.0;
}

QString metric_axis_title(CrossoverMetric metric) {
    return metric == CrossoverMetric::StepTimeMs ? QStringLiteral("decode step time (ms, log scale)")
                                                 : QStringLiteral("decode throughput (tokens/s, log scale)");
}

}  // namespace

QChart* make_crossover_chart(const PlanResult& plan, const std::vector<SweepPoint>& sweep,
                             const CrossoverChartOptions& options) {
    const auto& q = plan.request;
    const QString title = !options.title.isEmpty()
                              ? options.title
                              : QStringLiteral("%1 on %2: %3 vs batch (context %4)")
                                    .arg(detail::qstr(q.model.name), detail::qstr(q.gpu.name),
                                         options.metric == CrossoverMetric::StepTimeMs ? QStringLiteral("decode step time")
                                                                                       : QStringLiteral("decode throughput"))
                                    .arg(q.workload.context_tokens);
    QChart* chart = detail::new_chart(title);

    // The points of each plan scheme, batch ascending, with positive values only (log axes).
    std::vector<std::string> names;
    std::map<std::string, std::vector<const SweepPoint*>> by_scheme;
    for (const SchemeResult& r : plan.schemes) {
        names.push_back(scheme_name(r.costs.scheme));
        by_scheme[names.back()];
    }
    double min_batch = std::numeric_limits<double>::infinity(), max_batch = 0;
    double min_value = std::numeric_limits<double>::infinity(), max_value = 0;
    for (const SweepPoint& p : sweep) {
        auto it = by_scheme.find(p.scheme);
        const double v = metric_value(p, options.metric);
        if (it == by_scheme.end() || p.batch <= 0 || !(v > 0) || !std::isfinite(v)) continue;
        it->second.push_back(&p);
        min_batch = std::min(min_batch, static_cast<double>(p.batch));
        max_batch = std::max(max_batch, static_cast<double>(p.batch));
        min_value = std::min(min_value, v);
        max_value = std::max(max_value, v);
    }
    std::map<std::string, std::vector<QPointF>> measured;
    for (const MeasuredStepPoint& p : options.measured) {
        const double v = measured_value(p, options.metric);
        const double b = static_cast<double>(p.batch);
        if (!by_scheme.contains(p.scheme) || b < min_batch || b > max_batch || !(v > 0) || !std::isfinite(v)) continue;
        measured[p.scheme].emplace_back(static_cast<double>(p.batch), v);
        min_value = std::min(min_value, v);
        max_value = std::max(max_value, v);
    }
    for (auto& [name, points] : by_scheme)
        std::stable_sort(points.begin(), points.end(), [](const SweepPoint* a, const SweepPoint* b) { return a->batch < b->batch; });
    if (!(max_batch > 0)) {
        chart->setTitle(title + QStringLiteral(" (no sweep points)"));
        return chart;
    }

    auto* x_axis = new QLogValueAxis();
    x_axis->setBase(2.0);
    x_axis->setLabelFormat(QStringLiteral("%.0f"));
    x_axis->setTitleText(QStringLiteral("batch (concurrent sequences, log scale; dashed: beyond the KV-cache admission limit)"));
    detail::set_log_range(x_axis, min_batch, std::max(max_batch, min_batch * 2));
    x_axis->setMinorTickCount(0);
    auto* y_axis = new QLogValueAxis();
    y_axis->setBase(10.0);
    y_axis->setLabelFormat(QStringLiteral("%g"));
    y_axis->setTitleText(metric_axis_title(options.metric));
    // From the decade below the lowest value to a little above the highest (log axes label decades).
    const double y_lo = detail::floor_power(min_value, 10.0);
    const double y_hi = std::min(detail::ceil_power(max_value, 10.0), max_value * kHeadroom);
    detail::set_log_range(y_axis, y_lo, y_hi > y_lo ? y_hi : y_lo * 10);
    y_axis->setMinorTickCount(8);
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);

    // One solid line per scheme for admitted batches, continued dashed where admission refuses.
    std::map<std::string, std::vector<QPointF>> curves;  // every point, for marker placement
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        const QColor color = detail::series_color(static_cast<int>(i));
        auto* admitted = new QLineSeries();
        admitted->setName(detail::qstr(name));
        auto* refused = new QLineSeries();
        refused->setName(detail::qstr(name) + QStringLiteral(" (not admitted)"));
        std::vector<QPointF>& curve = curves[name];
        for (const SweepPoint* p : by_scheme[name]) {
            const QPointF point(static_cast<double>(p->batch), metric_value(*p, options.metric));
            curve.push_back(point);
            if (p->admitted) {
                admitted->append(point);
            } else {
                if (refused->count() == 0 && admitted->count() > 0) refused->append(admitted->at(admitted->count() - 1));
                refused->append(point);
            }
        }
        QPen solid(color, 2.2);
        admitted->setPen(solid);
        QPen dashed(color, 1.6, Qt::DashLine);
        refused->setPen(dashed);
        detail::add_series(chart, admitted, {x_axis, y_axis});
        detail::add_series(chart, refused, {x_axis, y_axis});
        detail::hide_legend_entry(chart, refused);
    }
    // Measured points over the curves, in the curves' colours (outside the swept batches: dropped above).
    // One neutral legend entry stands for them all: a legend entry per scheme would double the legend.
    const auto triangle = [](QScatterSeries* s, const QColor& color) {
        s->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
        s->setMarkerSize(10);
        s->setColor(color);
        s->setBorderColor(QColor(0x22, 0x22, 0x22));
    };
    if (!measured.empty()) {
        auto* key = new QScatterSeries();
        key->setName(QStringLiteral("measured"));
        triangle(key, QColor(0xBB, 0xBB, 0xBB));
        detail::add_series(chart, key, {x_axis, y_axis});
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto it = measured.find(names[i]);
        if (it == measured.end()) continue;
        auto* points = new QScatterSeries();
        points->setName(detail::qstr(names[i]) + QStringLiteral(" (measured)"));
        triangle(points, detail::series_color(static_cast<int>(i)));
        for (const QPointF& p : it->second) points->append(p);
        detail::add_series(chart, points, {x_axis, y_axis});
        detail::hide_legend_entry(chart, points);
    }

    const auto in_range = [&](double b) { return std::isfinite(b) && b >= min_batch && b <= max_batch; };
    if (options.show_ridges) {
        auto* ridges = new QScatterSeries();
        ridges->setName(QStringLiteral("ridge points"));
        ridges->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        ridges->setMarkerSize(9);
        ridges->setColor(QColor(0x33, 0x33, 0x33));
        ridges->setBorderColor(Qt::white);
        for (const RidgeInfo& r : plan.ridges) {
            const auto it = curves.find(r.scheme);
            if (it == curves.end() || it->second.empty() || !in_range(r.batch)) continue;
            ridges->append(r.batch, detail::interpolate_log_log(it->second, r.batch));
        }
        detail::add_series(chart, ridges, {x_axis, y_axis});
        if (ridges->count() == 0) detail::hide_legend_entry(chart, ridges);
    }
    if (options.show_crossovers) {
        auto* crossings = new QScatterSeries();
        crossings->setName(QStringLiteral("crossovers"));
        crossings->setMarkerShape(QScatterSeries::MarkerShapeCircle);
        crossings->setMarkerSize(11);
        crossings->setColor(QColor(0xC0, 0x00, 0x00));
        crossings->setBorderColor(Qt::white);
        crossings->setPointLabelsFormat(QStringLiteral("B=@xPoint"));
        crossings->setPointLabelsVisible(true);
        crossings->setPointLabelsClipping(false);
        for (const Crossover& c : plan.crossovers) {
            const auto it = curves.find(c.scheme_a);
            if (it == curves.end() || it->second.empty() || !in_range(c.batch)) continue;
            crossings->append(c.batch, detail::interpolate_log_log(it->second, c.batch));
        }
        detail::add_series(chart, crossings, {x_axis, y_axis});
        if (crossings->count() == 0) detail::hide_legend_entry(chart, crossings);
    }
    if (options.show_cursor) {
        const double batch = static_cast<double>(q.workload.batch);
        if (batch >= x_axis->min() && batch <= x_axis->max()) {
            auto* cursor = new QLineSeries();
            cursor->setName(QStringLiteral("batch %1").arg(q.workload.batch));
            cursor->append(batch, y_axis->min());
            cursor->append(batch, y_axis->max());
            cursor->setPen(QPen(QColor(0x55, 0x55, 0x55), 1.5, Qt::DotLine));
            detail::add_series(chart, cursor, {x_axis, y_axis});
        }
    }
    return chart;
}

}  // namespace quantplan::ui

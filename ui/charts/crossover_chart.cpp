// The batch-size crossover chart: core's sweep points per scheme on log-log axes, with the ridge
// points, crossovers, admission limit and requested batch of the plan.
//
// The chart is first described as plain data (ChartSpec: ranges and one SeriesSpec per series),
// then either built as a new QChart or written into an existing one. Dragging the batch slider
// redraws this chart at every step, and building a QChart only to copy it costs more than the
// plan itself (Qt Charts connects every series to its axes by signal name), so the window updates
// the chart it shows in place whenever the series are the same ones.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLegendMarker>
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
// set_log_range's widening (chart_style.cpp), applied here to place the cursor on the axis ends.
constexpr double kWiden = 1e-6;

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

// One series as data.
struct SeriesSpec {
    QString name;
    QString key;  // what the series is, stable across updates (the cursor's name carries its batch)
    bool scatter = false;
    QList<QPointF> points;
    QPen pen;                                                               // line series
    QColor color, border;                                                   // scatter series
    QScatterSeries::MarkerShape shape = QScatterSeries::MarkerShapeCircle;  // scatter series
    qreal marker_size = 10;                                                 // scatter series
    QString labels_format;                                                  // scatter point labels; empty: none
    bool in_legend = true;
    bool area = false;       // a shaded band: `points` its upper edge, `lower` its lower edge, filled with `color`
    QList<QPointF> lower;
};

// The whole chart as data.
struct ChartSpec {
    QString title;
    bool has_points = false;  // false: the title says there is nothing to draw, no axes
    double x_lo = 1, x_hi = 2, y_lo = 1, y_hi = 10;
    QString y_title;
    std::vector<SeriesSpec> series;
};

ChartSpec crossover_spec(const PlanResult& plan, const std::vector<SweepPoint>& sweep, const CrossoverChartOptions& options) {
    ChartSpec spec;
    const auto& q = plan.request;
    spec.title = !options.title.isEmpty()
                     ? options.title
                     : QStringLiteral("%1 on %2: %3 vs batch (context %4)")
                           .arg(detail::qstr(q.model.name), detail::qstr(q.gpu.name),
                                options.metric == CrossoverMetric::StepTimeMs ? QStringLiteral("decode step time") : QStringLiteral("decode throughput"))
                           .arg(q.workload.context_tokens);
    spec.y_title = metric_axis_title(options.metric);

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
    // Speculative decoding (--spec): each scheme's time per output token (or tokens/s) speculating,
    // at the batches the plan priced it.
    std::map<std::string, QList<QPointF>> speculative;
    const auto spec_value = [&](const SpecPoint& p) { return options.metric == CrossoverMetric::StepTimeMs ? p.tpot_s * detail::kMsPerS : p.tokens_per_s; };
    for (const SchemeSpeculation& sp : plan.speculation)
        for (const SpecPoint& p : sp.points) {
            const double v = spec_value(p), b = static_cast<double>(p.batch);
            if (!by_scheme.contains(sp.scheme) || b < min_batch || b > max_batch || !(v > 0) || !std::isfinite(v)) continue;
            speculative[sp.scheme].append(QPointF(b, v));
            min_value = std::min(min_value, v);
            max_value = std::max(max_value, v);
        }
    std::map<std::string, QList<QPointF>> measured;
    for (const MeasuredStepPoint& p : options.measured) {
        const double v = measured_value(p, options.metric);
        const double b = static_cast<double>(p.batch);
        if (!by_scheme.contains(p.scheme) || b < min_batch || b > max_batch || !(v > 0) || !std::isfinite(v)) continue;
        measured[p.scheme].append(QPointF(b, v));
        min_value = std::min(min_value, v);
        max_value = std::max(max_value, v);
    }
    for (auto& [name, points] : by_scheme)
        std::stable_sort(points.begin(), points.end(), [](const SweepPoint* a, const SweepPoint* b) { return a->batch < b->batch; });
    // The band's edges in the chart's metric: step time low-high, or tokens/s batch/high-batch/low.
    const auto band_edges = [&](const SweepPoint& p) -> std::pair<double, double> {
        if (!(p.time_low_s > 0) || !(p.time_high_s > 0)) return {0, 0};
        if (options.metric == CrossoverMetric::StepTimeMs) return {p.time_low_s * detail::kMsPerS, p.time_high_s * detail::kMsPerS};
        const double b = static_cast<double>(p.batch);
        return {b / p.time_high_s, b / p.time_low_s};
    };
    for (const auto& [name, points] : by_scheme)
        for (const SweepPoint* p : points)
            if (const auto [lo, hi] = band_edges(*p); lo > 0) min_value = std::min(min_value, lo), max_value = std::max(max_value, hi);
    if (!(max_batch > 0)) {
        spec.title += QStringLiteral(" (no sweep points)");
        return spec;
    }
    spec.has_points = true;
    spec.x_lo = min_batch;
    spec.x_hi = std::max(max_batch, min_batch * 2);
    // From the decade below the lowest value to a little above the highest (log axes label decades).
    spec.y_lo = detail::floor_power(min_value, 10.0);
    const double y_hi = std::min(detail::ceil_power(max_value, 10.0), max_value * kHeadroom);
    spec.y_hi = y_hi > spec.y_lo ? y_hi : spec.y_lo * 10;

    // One solid line per scheme for admitted batches, continued dashed where admission refuses.
    std::map<std::string, std::vector<QPointF>> curves;  // every point, for marker placement
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        const QColor color = detail::series_color(static_cast<int>(i));
        SeriesSpec admitted, refused;
        admitted.name = detail::qstr(name);
        admitted.pen = QPen(color, 2.2);
        refused.name = detail::qstr(name) + QStringLiteral(" (not admitted)");
        refused.pen = QPen(color, 1.6, Qt::DashLine);
        refused.in_legend = false;
        // The p10-p90 band under an engine profile, drawn first so the curves stay on top.
        SeriesSpec band;
        band.name = detail::qstr(name) + QStringLiteral(" (p10-p90)");
        band.area = true;
        band.color = color;
        band.color.setAlpha(48);
        band.in_legend = false;
        for (const SweepPoint* p : by_scheme[name])
            if (const auto [lo, hi] = band_edges(*p); lo > 0) {
                band.points.append(QPointF(static_cast<double>(p->batch), hi));
                band.lower.append(QPointF(static_cast<double>(p->batch), lo));
            }
        if (!band.points.isEmpty()) spec.series.push_back(std::move(band));
        std::vector<QPointF>& curve = curves[name];
        for (const SweepPoint* p : by_scheme[name]) {
            const QPointF point(static_cast<double>(p->batch), metric_value(*p, options.metric));
            curve.push_back(point);
            if (p->admitted) {
                admitted.points.append(point);
            } else {
                if (refused.points.isEmpty() && !admitted.points.isEmpty()) refused.points.append(admitted.points.back());
                refused.points.append(point);
            }
        }
        spec.series.push_back(std::move(admitted));
        spec.series.push_back(std::move(refused));
    }
    // A scatter series of markers.
    const auto markers = [](const QString& name, QScatterSeries::MarkerShape shape, qreal size, const QColor& color, const QColor& border) {
        SeriesSpec s;
        s.name = name;
        s.scatter = true;
        s.shape = shape;
        s.marker_size = size;
        s.color = color;
        s.border = border;
        return s;
    };
    // Speculating: the same colour, dash-dot, and a marker where it stops paying (speed-up below 1).
    if (!speculative.empty()) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto it = speculative.find(names[i]);
            if (it == speculative.end() || it->second.isEmpty()) continue;
            SeriesSpec s;
            s.name = detail::qstr(names[i]) + QStringLiteral(" (speculative)");
            s.pen = QPen(detail::series_color(static_cast<int>(i)), 1.8, Qt::DashDotLine);
            s.points = it->second;
            spec.series.push_back(std::move(s));
        }
        SeriesSpec stops = markers(QStringLiteral("speculation stops paying"), QScatterSeries::MarkerShapeRotatedRectangle, 11, QColor(0x8A, 0x2B, 0xE2),
                                   Qt::white);
        stops.labels_format = QStringLiteral("B=@xPoint");
        for (const SchemeSpeculation& sp : plan.speculation) {
            if (!sp.stops_paying_batch) continue;
            const double b = static_cast<double>(*sp.stops_paying_batch);
            for (const SpecPoint& p : sp.points)
                if (p.batch == *sp.stops_paying_batch && b >= min_batch && b <= max_batch) stops.points.append(QPointF(b, spec_value(p)));
        }
        stops.in_legend = !stops.points.isEmpty();
        spec.series.push_back(std::move(stops));
    }
    // Measured points over the curves, in the curves' colours. One neutral legend entry stands for
    // them all: a legend entry per scheme would double the legend.
    const QColor triangle_border(0x22, 0x22, 0x22);
    if (!measured.empty())
        spec.series.push_back(markers(QStringLiteral("measured"), QScatterSeries::MarkerShapeTriangle, 10, QColor(0xBB, 0xBB, 0xBB), triangle_border));
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto it = measured.find(names[i]);
        if (it == measured.end()) continue;
        SeriesSpec s = markers(detail::qstr(names[i]) + QStringLiteral(" (measured)"), QScatterSeries::MarkerShapeTriangle, 10,
                               detail::series_color(static_cast<int>(i)), triangle_border);
        s.points = it->second;
        s.in_legend = false;
        spec.series.push_back(std::move(s));
    }

    // Ridge and crossover markers on the curve of the scheme they belong to (outside the swept
    // batches: none); out of the legend when there is nothing to mark.
    const auto place = [&](SeriesSpec& s, const std::string& scheme, double batch) {
        const auto it = curves.find(scheme);
        if (it == curves.end() || it->second.empty() || !std::isfinite(batch) || batch < min_batch || batch > max_batch) return;
        s.points.append(QPointF(batch, detail::interpolate_log_log(it->second, batch)));
    };
    if (options.show_ridges) {
        SeriesSpec ridges = markers(QStringLiteral("ridge points"), QScatterSeries::MarkerShapeRectangle, 9, QColor(0x33, 0x33, 0x33), Qt::white);
        for (const RidgeInfo& r : plan.ridges) place(ridges, r.scheme, r.batch);
        ridges.in_legend = !ridges.points.isEmpty();
        spec.series.push_back(std::move(ridges));
    }
    if (options.show_crossovers) {
        SeriesSpec crossings = markers(QStringLiteral("crossovers"), QScatterSeries::MarkerShapeCircle, 11, QColor(0xC0, 0x00, 0x00), Qt::white);
        crossings.labels_format = QStringLiteral("B=@xPoint");
        for (const Crossover& c : plan.crossovers) place(crossings, c.scheme_a, c.batch);
        crossings.in_legend = !crossings.points.isEmpty();
        spec.series.push_back(std::move(crossings));
    }
    if (options.show_cursor) {
        // The axes' ends as set_log_range leaves them.
        const double batch = static_cast<double>(q.workload.batch);
        if (batch >= spec.x_lo * (1 - kWiden) && batch <= spec.x_hi * (1 + kWiden)) {
            SeriesSpec cursor;
            cursor.name = QStringLiteral("batch %1").arg(q.workload.batch);
            cursor.key = QStringLiteral("cursor");
            cursor.points = {QPointF(batch, spec.y_lo * (1 - kWiden)), QPointF(batch, spec.y_hi * (1 + kWiden))};
            cursor.pen = QPen(QColor(0x55, 0x55, 0x55), 1.5, Qt::DotLine);
            spec.series.push_back(std::move(cursor));
        }
    }
    return spec;
}

// Style (everything but name and points) of `s` onto `series`.
void apply_style(QXYSeries* series, const SeriesSpec& s) {
    if (auto* scatter = qobject_cast<QScatterSeries*>(series)) {
        if (scatter->markerShape() != s.shape) scatter->setMarkerShape(s.shape);
        if (scatter->markerSize() != s.marker_size) scatter->setMarkerSize(s.marker_size);
        if (scatter->color() != s.color) scatter->setColor(s.color);
        if (scatter->borderColor() != s.border) scatter->setBorderColor(s.border);
        const bool labels = !s.labels_format.isEmpty();
        if (labels && scatter->pointLabelsFormat() != s.labels_format) scatter->setPointLabelsFormat(s.labels_format);
        if (scatter->pointLabelsVisible() != labels) scatter->setPointLabelsVisible(labels);
        if (labels && scatter->pointLabelsClipping()) scatter->setPointLabelsClipping(false);
        return;
    }
    if (series->pen() != s.pen) series->setPen(s.pen);
}

// The property holding a series' SeriesSpec::key (its name when the key is empty).
constexpr const char* kKeyProperty = "qp_series_key";

QString key_of(const SeriesSpec& s) { return s.key.isEmpty() ? s.name : s.key; }

void show_in_legend(QChart* chart, QAbstractSeries* series, bool visible) {
    for (QLegendMarker* marker : chart->legend()->markers(series))
        if (marker->isVisible() != visible) marker->setVisible(visible);
}

}  // namespace

QChart* make_crossover_chart(const PlanResult& plan, const std::vector<SweepPoint>& sweep, const CrossoverChartOptions& options) {
    const ChartSpec spec = crossover_spec(plan, sweep, options);
    QChart* chart = detail::new_chart(spec.title);
    if (!spec.has_points) return chart;

    auto* x_axis = new QLogValueAxis();
    x_axis->setBase(2.0);
    x_axis->setLabelFormat(QStringLiteral("%.0f"));
    x_axis->setTitleText(QStringLiteral("batch (concurrent sequences, log scale; dashed: beyond the KV-cache admission limit)"));
    detail::set_log_range(x_axis, spec.x_lo, spec.x_hi);
    x_axis->setMinorTickCount(0);
    auto* y_axis = new QLogValueAxis();
    y_axis->setBase(10.0);
    y_axis->setLabelFormat(QStringLiteral("%g"));
    y_axis->setTitleText(spec.y_title);
    detail::set_log_range(y_axis, spec.y_lo, spec.y_hi);
    y_axis->setMinorTickCount(8);
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);
    for (const SeriesSpec& s : spec.series) {
        if (s.area) {
            auto* area = new QAreaSeries();
            auto* upper = new QLineSeries(area);  // the area series does not own its edges: parent them to it
            auto* lower = new QLineSeries(area);
            upper->append(s.points);
            lower->append(s.lower);
            area->setUpperSeries(upper);
            area->setLowerSeries(lower);
            area->setName(s.name);
            area->setProperty(kKeyProperty, key_of(s));
            area->setBrush(s.color);
            area->setPen(Qt::NoPen);
            detail::add_series(chart, area, {x_axis, y_axis});
            if (!s.in_legend) detail::hide_legend_entry(chart, area);
            continue;
        }
        QXYSeries* series = s.scatter ? static_cast<QXYSeries*>(new QScatterSeries()) : static_cast<QXYSeries*>(new QLineSeries());
        series->setName(s.name);
        series->setProperty(kKeyProperty, key_of(s));
        apply_style(series, s);
        series->append(s.points);
        detail::add_series(chart, series, {x_axis, y_axis});
        if (!s.in_legend) detail::hide_legend_entry(chart, series);
    }
    return chart;
}

bool update_crossover_chart(QChart* chart, const PlanResult& plan, const std::vector<SweepPoint>& sweep, const CrossoverChartOptions& options) {
    if (!chart) return false;
    const ChartSpec spec = crossover_spec(plan, sweep, options);
    const QList<QAbstractSeries*> series = chart->series();
    const QList<QAbstractAxis*> axes = chart->axes();
    // The same structure: the two log axes, and series of the same names and kinds in the same order.
    if (!spec.has_points || axes.size() != 2 || series.size() != static_cast<qsizetype>(spec.series.size())) return false;
    auto* x_axis = qobject_cast<QLogValueAxis*>(axes[0]);
    auto* y_axis = qobject_cast<QLogValueAxis*>(axes[1]);
    if (!x_axis || !y_axis) return false;
    for (qsizetype i = 0; i < series.size(); ++i) {
        const SeriesSpec& s = spec.series[static_cast<std::size_t>(i)];
        const bool is_scatter = qobject_cast<QScatterSeries*>(series[i]) != nullptr;
        const bool is_area = qobject_cast<QAreaSeries*>(series[i]) != nullptr;
        if (series[i]->property(kKeyProperty).toString() != key_of(s) || is_scatter != s.scatter || is_area != s.area) return false;
        if (!is_area && !qobject_cast<QXYSeries*>(series[i])) return false;
    }
    if (chart->title() != spec.title) chart->setTitle(spec.title);
    if (y_axis->titleText() != spec.y_title) y_axis->setTitleText(spec.y_title);
    // Axis setters relay the chart out even for the value they already have: only on a change.
    const auto range = [](QLogValueAxis* axis, double lo, double hi) {
        if (axis->min() != lo * (1 - kWiden) || axis->max() != hi * (1 + kWiden)) detail::set_log_range(axis, lo, hi);
    };
    range(x_axis, spec.x_lo, spec.x_hi);
    range(y_axis, spec.y_lo, spec.y_hi);
    for (qsizetype i = 0; i < series.size(); ++i) {
        const SeriesSpec& s = spec.series[static_cast<std::size_t>(i)];
        if (auto* area = qobject_cast<QAreaSeries*>(series[i])) {
            if (area->name() != s.name) area->setName(s.name);
            if (area->brush().color() != s.color) area->setBrush(s.color);
            if (area->upperSeries()->points() != s.points) area->upperSeries()->replace(s.points);
            if (area->lowerSeries()->points() != s.lower) area->lowerSeries()->replace(s.lower);
            show_in_legend(chart, area, s.in_legend);
            continue;
        }
        auto* xy = qobject_cast<QXYSeries*>(series[i]);
        if (xy->name() != s.name) xy->setName(s.name);
        apply_style(xy, s);
        if (xy->points() != s.points) xy->replace(s.points);
        show_in_legend(chart, xy, s.in_legend);
    }
    return true;
}

}  // namespace quantplan::ui

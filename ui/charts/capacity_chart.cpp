// The capacity charts: latency percentiles against the request rate with the SLO and each
// scheme's highest rate, cost per million output tokens per configuration, and one run's
// timeline. Drawn from core's CapacityPlan (core/serve/capacity_plan.h) only; the arithmetic here
// is unit conversion (s -> ms, share -> %) and log-log interpolation to place a marker on a curve.
#include <algorithm>
#include <cmath>
#include <limits>

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QtGui/QPen>

#include "ui/charts/chart_style.h"
#include "ui/charts/charts.h"

namespace quantplan::ui {
namespace {

// Room above the highest curve (or the SLO line).
constexpr double kHeadroom = 1.15;

const serve::Percentiles& latency_of(const serve::RatePoint& p, ServeLatency metric) {
    switch (metric) {
    case ServeLatency::Ttft: return p.ttft_s;
    case ServeLatency::Tpot: return p.tpot_s;
    default: return p.e2e_s;
    }
}

QString latency_name(ServeLatency metric) {
    switch (metric) {
    case ServeLatency::Ttft: return QStringLiteral("TTFT");
    case ServeLatency::Tpot: return QStringLiteral("TPOT");
    default: return QStringLiteral("end-to-end latency");
    }
}

QString percentile_name(double quantile) {
    return quantile <= 0.5 ? QStringLiteral("p50") : quantile <= 0.9 ? QStringLiteral("p90") : QStringLiteral("p99");
}

}  // namespace

QChart* make_latency_rate_chart(const serve::CapacityPlan& plan, const LatencyRateChartOptions& options) {
    const QString title = !options.title.isEmpty() ? options.title
                                                   : QStringLiteral("%1 %2 against request rate").arg(latency_name(options.metric),
                                                                                                     percentile_name(options.quantile));
    QChart* chart = detail::new_chart(title);
    chart->legend()->setAlignment(Qt::AlignRight);  // scheme names stay whole in a narrow view
    struct Curve {
        QString name;
        std::vector<QPointF> points;
        std::optional<double> max_rate;
        int color = 0;
    };
    std::vector<Curve> curves;
    double x_hi = 0, y_hi = 0;
    for (std::size_t i = 0; i < plan.schemes.size(); ++i) {
        const serve::SchemeCapacity& s = plan.schemes[i];
        Curve c;
        c.name = detail::qstr(s.name);
        c.max_rate = s.max_rate;
        c.color = static_cast<int>(i);
        for (const serve::RatePoint& p : s.sweep) {
            const double ms = latency_of(p, options.metric).at(options.quantile) * detail::kMsPerS;
            if (!(p.rate_per_s > 0) || !(ms > 0)) continue;
            c.points.emplace_back(p.rate_per_s, ms);
        }
        if (c.points.empty()) continue;
        std::sort(c.points.begin(), c.points.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
        for (const QPointF& p : c.points) {
            x_hi = std::max(x_hi, p.x());
            y_hi = std::max(y_hi, p.y());
        }
        curves.push_back(std::move(c));
    }
    if (curves.empty()) {
        chart->setTitle(title + QStringLiteral(": no scheme has a highest rate to sweep around"));
        return chart;
    }
    if (options.slo_s && *options.slo_s > 0) y_hi = std::max(y_hi, *options.slo_s * detail::kMsPerS);
    // Linear axes: the curves span a decade at most, where a log axis would show one label.
    auto* x_axis = new QValueAxis();
    x_axis->setTitleText(QStringLiteral("request rate (requests/s, Poisson)"));
    x_axis->setRange(0, x_hi * 1.05);
    x_axis->applyNiceNumbers();
    x_axis->setLabelFormat(QStringLiteral("%g"));
    auto* y_axis = new QValueAxis();
    y_axis->setTitleText(QStringLiteral("%1 %2 (ms)").arg(latency_name(options.metric), percentile_name(options.quantile)));
    y_axis->setRange(0, y_hi * kHeadroom);
    y_axis->applyNiceNumbers();
    y_axis->setLabelFormat(QStringLiteral("%g"));
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);

    auto* markers = new QScatterSeries();
    markers->setName(QStringLiteral("highest rate"));
    markers->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    markers->setMarkerSize(11);
    markers->setColor(QColor(0x20, 0x20, 0x20));
    markers->setBorderColor(Qt::white);
    for (const Curve& c : curves) {
        auto* line = new QLineSeries();
        line->setName(c.name);
        line->setPen(QPen(detail::series_color(c.color), 2.5));
        for (const QPointF& p : c.points) line->append(p);
        detail::add_series(chart, line, {x_axis, y_axis});
        if (c.max_rate) markers->append(*c.max_rate, detail::interpolate_log_log(c.points, *c.max_rate));  // on the curve
    }
    if (options.slo_s && *options.slo_s > 0) {
        auto* slo = new QLineSeries();
        slo->setName(QStringLiteral("SLO"));
        slo->append(0, *options.slo_s * detail::kMsPerS);
        slo->append(x_axis->max(), *options.slo_s * detail::kMsPerS);
        slo->setPen(QPen(QColor(0xC0, 0x00, 0x00), 2.0, Qt::DashLine));
        detail::add_series(chart, slo, {x_axis, y_axis});
    }
    detail::add_series(chart, markers, {x_axis, y_axis});
    return chart;
}

QChart* make_capacity_cost_chart(const serve::CapacityPlan& plan, std::size_t max_configurations) {
    const QString title = QStringLiteral("Cost per million output tokens per configuration");
    QChart* chart = detail::new_chart(title);
    std::vector<const serve::Configuration*> priced;
    for (const serve::Configuration& c : plan.ranked)
        if (c.cost_output && priced.size() < max_configurations) priced.push_back(&c);
    if (priced.empty()) {
        chart->setTitle(title + QStringLiteral(": no configuration has a price"));
        return chart;
    }
    auto* set = new QBarSet(QStringLiteral("USD per million output tokens"));
    set->setColor(detail::series_color(0));
    QStringList categories;
    double most = 0;
    // A horizontal bar chart draws its first category at the bottom: the cheapest goes last.
    for (auto it = priced.rbegin(); it != priced.rend(); ++it) {
        const serve::Configuration& c = **it;
        categories << QStringLiteral("%1 TP%2 %3 x%4").arg(detail::qstr(c.gpu)).arg(c.tp).arg(detail::qstr(c.scheme)).arg(c.replicas);
        set->append(*c.cost_output);
        most = std::max(most, *c.cost_output);
    }
    set->setLabelColor(QColor(0x20, 0x20, 0x20));
    auto* bars = new QHorizontalBarSeries();
    bars->append(set);
    bars->setBarWidth(0.7);
    bars->setLabelsVisible(true);
    bars->setLabelsFormat(QStringLiteral("@value"));
    bars->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    bars->setLabelsPrecision(3);
    auto* y_axis = new QBarCategoryAxis();
    y_axis->append(categories);
    auto* x_axis = new QValueAxis();
    x_axis->setTitleText(QStringLiteral("USD per million output tokens (at the target rate)"));
    x_axis->setRange(0, most > 0 ? most * 1.2 : 1.0);
    x_axis->applyNiceNumbers();
    x_axis->setLabelFormat(QStringLiteral("%g"));
    chart->addAxis(y_axis, Qt::AlignLeft);
    chart->addAxis(x_axis, Qt::AlignBottom);
    detail::add_series(chart, bars, {x_axis, y_axis});
    chart->legend()->setVisible(false);
    return chart;
}

QChart* make_timeline_chart(const std::vector<serve::TimelinePoint>& timeline, const QString& title_given) {
    const QString title = !title_given.isEmpty() ? title_given : QStringLiteral("One run over time: batch, queue and KV-cache use");
    QChart* chart = detail::new_chart(title);
    if (timeline.empty()) {
        chart->setTitle(title + QStringLiteral(": no timeline"));
        return chart;
    }
    auto* batch = new QLineSeries();
    batch->setName(QStringLiteral("batch"));
    batch->setPen(QPen(detail::series_color(0), 2.0));
    auto* queue = new QLineSeries();
    queue->setName(QStringLiteral("queue"));
    queue->setPen(QPen(detail::series_color(3), 2.0));
    auto* kv = new QLineSeries();
    kv->setName(QStringLiteral("KV use (%)"));
    kv->setPen(QPen(detail::series_color(2), 2.0, Qt::DashLine));
    QList<QPointF> b, q, k;
    double most = 1, t_hi = 0;
    for (const serve::TimelinePoint& p : timeline) {
        b.append(QPointF(p.t_s, static_cast<double>(p.running)));
        q.append(QPointF(p.t_s, static_cast<double>(p.waiting)));
        k.append(QPointF(p.t_s, p.kv_utilization * 100.0));
        most = std::max({most, static_cast<double>(p.running), static_cast<double>(p.waiting)});
        t_hi = std::max(t_hi, p.t_s);
    }
    batch->replace(b);
    queue->replace(q);
    kv->replace(k);
    auto* x_axis = new QValueAxis();
    x_axis->setTitleText(QStringLiteral("time (s)"));
    x_axis->setRange(timeline.front().t_s, std::max(t_hi, timeline.front().t_s + 1e-3));
    x_axis->applyNiceNumbers();
    x_axis->setLabelFormat(QStringLiteral("%g"));
    auto* count_axis = new QValueAxis();
    count_axis->setTitleText(QStringLiteral("sequences / requests"));
    count_axis->setRange(0, most * 1.1);
    count_axis->applyNiceNumbers();
    count_axis->setLabelFormat(QStringLiteral("%g"));
    auto* pct_axis = new QValueAxis();
    pct_axis->setTitleText(QStringLiteral("KV-cache use (%)"));
    pct_axis->setRange(0, 100);
    pct_axis->setLabelFormat(QStringLiteral("%g"));
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(count_axis, Qt::AlignLeft);
    chart->addAxis(pct_axis, Qt::AlignRight);
    detail::add_series(chart, batch, {x_axis, count_axis});
    detail::add_series(chart, queue, {x_axis, count_axis});
    detail::add_series(chart, kv, {x_axis, pct_axis});
    // Speculative decoding: the share of each step's speculative tokens accepted, on the % axis.
    QList<QPointF> a;
    for (const serve::TimelinePoint& p : timeline)
        if (p.tokens_per_sequence > 0) a.append(QPointF(p.t_s, p.acceptance * 100.0));
    if (!a.isEmpty()) {
        auto* accepted = new QLineSeries();
        accepted->setName(QStringLiteral("accepted (%)"));
        accepted->setPen(QPen(detail::series_color(4), 1.5, Qt::DotLine));
        accepted->replace(a);
        detail::add_series(chart, accepted, {x_axis, pct_axis});
        pct_axis->setTitleText(QStringLiteral("KV-cache use, speculative tokens accepted (%)"));
    }
    return chart;
}

}  // namespace quantplan::ui

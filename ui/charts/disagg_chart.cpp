// The disaggregation charts: the comparison of a disaggregated layout with aggregated serving on
// the same GPUs, and the sweeps in prompt length and TPOT SLO. Drawn from core's DisaggComparison
// and DisaggSweep (core/serve/disagg_plan.h) only; the arithmetic here is unit conversion.
#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QtGui/QPen>

#include "ui/charts/chart_style.h"
#include "ui/charts/charts.h"

namespace quantplan::ui {

QChart* make_disagg_comparison_chart(const serve::DisaggComparison& c) {
    const serve::DisaggSpec& spec = c.spec;
    const QString title = QStringLiteral("Disaggregated %1P:%2D against %3 aggregated replicas on %4 GPUs")
                              .arg(spec.prefill.instances)
                              .arg(spec.decode.instances)
                              .arg(c.replicas)
                              .arg(c.gpus);
    QChart* chart = detail::new_chart(title);
    const serve::ServeStats& dis = c.stats.end_to_end;
    const QStringList categories = {QStringLiteral("TTFT p50"), QStringLiteral("TTFT p99"), QStringLiteral("TPOT p50"), QStringLiteral("TPOT p99"),
                                    QStringLiteral("E2E p50")};
    const auto values = [](const serve::ServeStats& s) {
        return std::vector<double>{s.ttft_s.p50, s.ttft_s.p99, s.tpot_s.p50, s.tpot_s.p99, s.e2e_s.p50};
    };
    auto* bars = new QBarSeries();
    double lo = 1e300, hi = 0;
    const auto add = [&](const QString& name, const std::vector<double>& v, int color) {
        auto* set = new QBarSet(name);
        set->setColor(detail::series_color(color));
        for (const double s : v) {
            const double ms = std::max(s * detail::kMsPerS, 1e-3);  // a log axis has no zero
            set->append(ms);
            lo = std::min(lo, ms);
            hi = std::max(hi, ms);
        }
        bars->append(set);
    };
    add(QStringLiteral("disaggregated (%1 GPUs)").arg(c.gpus), values(dis), 0);
    if (c.aggregated) add(QStringLiteral("aggregated (%1 x TP %2)").arg(c.replicas).arg(c.aggregated_tp), values(*c.aggregated), 1);
    auto* x_axis = new QBarCategoryAxis();
    x_axis->append(categories);
    auto* y_axis = new QLogValueAxis();
    y_axis->setBase(10);
    y_axis->setTitleText(QStringLiteral("ms (log)"));
    y_axis->setLabelFormat(QStringLiteral("%g"));
    detail::set_log_range(y_axis, detail::floor_power(lo, 10), detail::ceil_power(hi * 1.2, 10));
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);
    detail::add_series(chart, bars, {x_axis, y_axis});
    if (!c.aggregated) chart->setTitle(title + QStringLiteral(" (aggregated does not fit)"));
    return chart;
}

QChart* make_disagg_sweep_chart(const serve::DisaggSweep& s) {
    const bool prompt = s.axis == "prompt_tokens";
    // USD per hour when every layout that holds has a price, else GPUs.
    bool priced = true;
    for (const serve::SweepPoint& p : s.points)
        for (const auto& k : {p.disaggregated, p.aggregated})
            if (k && !k->usd_per_hour) priced = false;
    const QString what = priced ? QStringLiteral("USD per hour") : QStringLiteral("GPUs");
    QChart* chart = detail::new_chart(QStringLiteral("Cheapest layout that holds the rate: %1 against %2")
                                          .arg(what, prompt ? QStringLiteral("prompt length") : QStringLiteral("TPOT SLO")));
    auto* x_axis = new QLogValueAxis();
    x_axis->setBase(prompt ? 2 : 10);
    x_axis->setLabelFormat(QStringLiteral("%g"));
    x_axis->setTitleText(prompt ? QStringLiteral("prompt tokens (log2)") : QStringLiteral("TPOT SLO (ms, log)"));
    auto* y_axis = new QValueAxis();
    y_axis->setTitleText(what);
    y_axis->setLabelFormat(QStringLiteral("%g"));
    double x_lo = 1e300, x_hi = 0, y_hi = 0;
    const auto x_of = [&](const serve::SweepPoint& p) { return prompt ? p.x : p.x * detail::kMsPerS; };
    const auto y_of = [&](const serve::LayoutCost& k) { return priced ? *k.usd_per_hour : static_cast<double>(k.gpus); };
    for (const serve::SweepPoint& p : s.points) {
        x_lo = std::min(x_lo, x_of(p));
        x_hi = std::max(x_hi, x_of(p));
        for (const auto& k : {p.disaggregated, p.aggregated})
            if (k) y_hi = std::max(y_hi, y_of(*k));
    }
    if (s.points.empty() || !(y_hi > 0)) {
        chart->setTitle(chart->title() + QStringLiteral(": no point holds"));
        return chart;
    }
    detail::set_log_range(x_axis, detail::floor_power(x_lo, x_axis->base()), detail::ceil_power(x_hi, x_axis->base()));
    y_axis->setRange(0, y_hi * 1.15);
    y_axis->applyNiceNumbers();
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);
    for (const auto& [name, disaggregated, color] : {std::tuple{QStringLiteral("disaggregated"), true, 0}, std::tuple{QStringLiteral("aggregated"), false, 1}}) {
        auto* line = new QLineSeries();
        line->setName(name);
        line->setPen(QPen(detail::series_color(color), 2.5));
        line->setPointsVisible(true);
        for (const serve::SweepPoint& p : s.points) {
            const std::optional<serve::LayoutCost>& k = disaggregated ? p.disaggregated : p.aggregated;
            if (k) line->append(x_of(p), y_of(*k));
        }
        detail::add_series(chart, line, {x_axis, y_axis});
    }
    if (s.crossover) {
        const double x = prompt ? *s.crossover : *s.crossover * detail::kMsPerS;
        auto* marker = new QLineSeries();
        marker->setName(QStringLiteral("disaggregation pays from here"));
        marker->append(x, 0);
        marker->append(x, y_axis->max());
        marker->setPen(QPen(QColor(0xC0, 0x00, 0x00), 2.0, Qt::DashLine));
        detail::add_series(chart, marker, {x_axis, y_axis});
    }
    return chart;
}

}  // namespace quantplan::ui

// The granularity-vs-error chart: the error lab's ladder (core/errorsim) as layer and weight
// error per granularity, one colour per weight format.
#include <algorithm>
#include <cmath>
#include <limits>

#include <QtCharts/QCategoryAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtGui/QPen>

#include "core/errorsim/error_lab.h"
#include "ui/charts/chart_style.h"
#include "ui/charts/charts.h"

namespace quantplan::ui {
namespace {

// Percent per fraction: the lab reports relative errors as fractions (error_lab.h).
constexpr double kPercentPerFraction = 100.0;

// A series name: "<label> <what>", or "<what>" without a label.
QString series_name(const QString& label, const char* what) {
    return label.isEmpty() ? QString::fromLatin1(what) : label + QLatin1Char(' ') + QString::fromLatin1(what);
}

}  // namespace

QChart* make_error_chart(const std::vector<std::vector<errorsim::LadderRow>>& ladders, const QStringList& format_labels,
                         const ErrorChartOptions& options) {
    QChart* chart = detail::new_chart(options.title.isEmpty() ? QStringLiteral("Granularity vs error") : options.title);
    if (ladders.empty() || std::all_of(ladders.begin(), ladders.end(), [](const auto& l) { return l.empty(); })) {
        chart->setTitle(chart->title() + QStringLiteral(" (no ladder)"));
        return chart;
    }
    // Columns: every granularity in order of first appearance (a fixed-granularity format such as
    // NVFP4 adds its own column, or shares g32 with the integer ladders).
    QStringList columns_named;
    for (const auto& ladder : ladders)
        for (const errorsim::LadderRow& row : ladder)
            if (!columns_named.contains(detail::qstr(row.granularity))) columns_named << detail::qstr(row.granularity);
    const auto columns = static_cast<int>(columns_named.size());

    auto* x_axis = new QCategoryAxis();
    x_axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    x_axis->setStartValue(-0.5);
    for (int i = 0; i < columns; ++i) x_axis->append(columns_named[i], i);
    x_axis->setRange(-0.35, columns - 1 + 0.35);
    x_axis->setTitleText(QStringLiteral("weight scale granularity (coarse to fine)"));
    x_axis->setGridLineVisible(false);
    auto* y_axis = new QLogValueAxis();
    y_axis->setBase(10.0);
    y_axis->setLabelFormat(QStringLiteral("%g"));
    y_axis->setMinorTickCount(8);
    y_axis->setTitleText(QStringLiteral("relative error (%, log scale)"));
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);

    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (std::size_t k = 0; k < ladders.size(); ++k) {
        const QString label = k < static_cast<std::size_t>(format_labels.size()) ? format_labels[static_cast<qsizetype>(k)] : QString();
        const QColor color = detail::series_color(static_cast<int>(k));
        auto* layer = new QLineSeries();
        layer->setName(series_name(label, "layer error"));
        layer->setPen(QPen(color, 2.4));
        layer->setPointsVisible(true);
        auto* heldout = new QLineSeries();
        heldout->setName(series_name(label, "layer error (held-out)"));
        heldout->setPen(QPen(color.lighter(125), 1.6, Qt::DotLine));
        auto* weight = new QLineSeries();
        weight->setName(series_name(label, "weight error"));
        weight->setPen(QPen(color, 1.8, Qt::DashLine));
        weight->setPointsVisible(true);
        const std::vector<errorsim::LadderRow>& rows = ladders[k];
        for (const errorsim::LadderRow& row : rows) {
            const auto i = static_cast<int>(columns_named.indexOf(detail::qstr(row.granularity)));
            const errorsim::ErrorLabResult& r = row.result;
            // A log axis cannot place zero or non-finite errors: those points are left out.
            const auto add = [&](QLineSeries* s, double fraction) {
                const double percent = fraction * kPercentPerFraction;
                if (!(percent > 0) || !std::isfinite(percent)) return;
                s->append(i, percent);
                lo = std::min(lo, percent);
                hi = std::max(hi, percent);
            };
            add(layer, r.layer_error_calibration);
            if (options.show_heldout) add(heldout, r.layer_error_heldout);
            add(weight, r.weight_error);
        }
        detail::add_series(chart, layer, {x_axis, y_axis});
        if (options.show_heldout) {
            detail::add_series(chart, heldout, {x_axis, y_axis});
        } else {
            delete heldout;
        }
        detail::add_series(chart, weight, {x_axis, y_axis});
    }
    if (hi > 0) {
        const double bottom = detail::floor_power(lo, 10.0), top = detail::ceil_power(hi, 10.0);
        detail::set_log_range(y_axis, bottom, top > bottom ? top : bottom * 10.0);
    } else {
        detail::set_log_range(y_axis, 0.1, 100.0);
    }
    return chart;
}

QChart* make_error_chart(const std::vector<errorsim::LadderRow>& ladder, const QString& format_label,
                         const ErrorChartOptions& options) {
    return make_error_chart(std::vector<std::vector<errorsim::LadderRow>>{ladder}, QStringList{format_label}, options);
}

}  // namespace quantplan::ui

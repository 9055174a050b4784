// The checkpoint-size chart: core's CheckpointBudget per scheme as stacked bars, against the
// naive bits/16 expectation and, when known, the inspected checkpoint's real size.
#include <algorithm>

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <QtGui/QPen>

#include "ui/charts/chart_style.h"
#include "ui/charts/charts.h"

namespace quantplan::ui {

QChart* make_checkpoint_chart(const PlanResult& plan, std::optional<std::uint64_t> actual_bytes) {
    QChart* chart = detail::new_chart(QStringLiteral("%1: checkpoint size per scheme").arg(detail::qstr(plan.request.model.name)));

    auto* payload = new QBarSet(QStringLiteral("payload"));
    auto* metadata = new QBarSet(QStringLiteral("metadata"));
    auto* unquantized = new QBarSet(QStringLiteral("unquantized"));
    payload->setColor(detail::series_color(0));
    metadata->setColor(detail::series_color(1));
    unquantized->setColor(QColor(0x99, 0x99, 0x99));
    auto* naive = new QScatterSeries();
    naive->setName(QStringLiteral("naive bits/16"));
    naive->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    naive->setMarkerSize(12);
    naive->setColor(QColor(0xC0, 0x00, 0x00));
    naive->setBorderColor(Qt::white);

    QStringList categories;
    double max_gb = 0;
    for (std::size_t i = 0; i < plan.schemes.size(); ++i) {
        const CheckpointBudget& b = plan.schemes[i].costs.budget;
        categories << detail::qstr(scheme_name(plan.schemes[i].costs.scheme));
        payload->append(static_cast<double>(b.quantized_payload_bytes) / detail::kBytesPerGb);
        metadata->append(static_cast<double>(b.metadata_bytes) / detail::kBytesPerGb);
        unquantized->append(static_cast<double>(b.unquantized_bytes) / detail::kBytesPerGb);
        naive->append(static_cast<double>(i), b.naive_bytes / detail::kBytesPerGb);
        max_gb = std::max({max_gb, static_cast<double>(b.checkpoint_bytes) / detail::kBytesPerGb, b.naive_bytes / detail::kBytesPerGb});
    }
    if (actual_bytes) max_gb = std::max(max_gb, static_cast<double>(*actual_bytes) / detail::kBytesPerGb);

    auto* bars = new QStackedBarSeries();
    bars->append(payload);
    bars->append(metadata);
    bars->append(unquantized);
    bars->setBarWidth(0.6);

    auto* x_axis = new QBarCategoryAxis();
    x_axis->append(categories);
    x_axis->setTitleText(QStringLiteral("scheme"));
    auto* y_axis = new QValueAxis();
    y_axis->setTitleText(QStringLiteral("checkpoint size (GB, 1e9 bytes)"));
    y_axis->setRange(0, max_gb > 0 ? max_gb * 1.1 : 1.0);
    y_axis->applyNiceNumbers();
    y_axis->setLabelFormat(QStringLiteral("%g"));
    chart->addAxis(x_axis, Qt::AlignBottom);
    chart->addAxis(y_axis, Qt::AlignLeft);
    detail::add_series(chart, bars, {x_axis, y_axis});
    detail::add_series(chart, naive, {x_axis, y_axis});

    if (actual_bytes) {
        const double gb = static_cast<double>(*actual_bytes) / detail::kBytesPerGb;
        auto* actual = new QLineSeries();
        actual->setName(QStringLiteral("actual checkpoint"));
        // Category i spans i - 0.5 .. i + 0.5 on a bar category axis.
        actual->append(-0.5, gb);
        actual->append(static_cast<double>(categories.size()) - 0.5, gb);
        actual->setPen(QPen(QColor(0x20, 0x20, 0x20), 2.0, Qt::DashDotLine));
        detail::add_series(chart, actual, {x_axis, y_axis});
    }
    return chart;
}

}  // namespace quantplan::ui

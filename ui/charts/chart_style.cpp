#include "ui/charts/chart_style.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>

#include <QtCharts/QAbstractAxis>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLogValueAxis>
#include <QtGui/QFont>

namespace quantplan::ui::detail {

QColor series_color(int index) {
    // Colour-blind-safe qualitative palette (Okabe and Ito, "Color Universal Design", 2008),
    // with black moved last and two darker extras for plans with many schemes.
    static const std::array<QColor, 10> kPalette = {
        QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73), QColor(0xD5, 0x5E, 0x00),
        QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xF0, 0xE4, 0x42), QColor(0x6A, 0x3D, 0x9A),
        QColor(0x8C, 0x56, 0x4B), QColor(0x00, 0x00, 0x00),
    };
    const auto n = static_cast<int>(kPalette.size());
    return kPalette[static_cast<std::size_t>(((index % n) + n) % n)];
}

QString qstr(const std::string& text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

QChart* new_chart(const QString& title) {
    auto* chart = new QChart();
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setTheme(QChart::ChartThemeLight);
    QFont title_font = chart->titleFont();
    title_font.setBold(true);
    title_font.setPointSizeF(title_font.pointSizeF() * 1.15);
    chart->setTitleFont(title_font);
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setVisible(true);
    return chart;
}

void add_series(QChart* chart, QAbstractSeries* series, const std::vector<QAbstractAxis*>& axes) {
    chart->addSeries(series);
    for (QAbstractAxis* axis : axes) series->attachAxis(axis);
}

void hide_legend_entry(QChart* chart, QAbstractSeries* series) {
    for (QLegendMarker* marker : chart->legend()->markers(series)) marker->setVisible(false);
}

double interpolate_log_log(const std::vector<QPointF>& points, double x) {
    assert(!points.empty());
    if (x <= points.front().x()) return points.front().y();
    if (x >= points.back().x()) return points.back().y();
    const auto upper = std::lower_bound(points.begin(), points.end(), x,
                                        [](const QPointF& p, double value) { return p.x() < value; });
    const QPointF& hi = *upper;
    const QPointF& lo = *(upper - 1);
    const double t = (std::log(x) - std::log(lo.x())) / (std::log(hi.x()) - std::log(lo.x()));
    return std::exp(std::log(lo.y()) + t * (std::log(hi.y()) - std::log(lo.y())));
}

double floor_power(double value, double base) {
    assert(value > 0 && base > 1);
    return std::pow(base, std::floor(std::log(value) / std::log(base) + 1e-9));
}

double ceil_power(double value, double base) {
    assert(value > 0 && base > 1);
    return std::pow(base, std::ceil(std::log(value) / std::log(base) - 1e-9));
}

void set_log_range(QLogValueAxis* axis, double lo, double hi) {
    // Relative widening: far below one pixel on any chart, far above double rounding.
    constexpr double kWiden = 1e-6;
    axis->setRange(lo * (1 - kWiden), hi * (1 + kWiden));
}

}  // namespace quantplan::ui::detail

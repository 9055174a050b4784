#pragma once
// Shared look of quantplan's charts (colours, fonts, axes) and the small display helpers the chart
// builders use. Internal to ui/charts: the window and the report use charts.h.
#include <string>
#include <vector>

#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCore/QPointF>
#include <QtCore/QString>
#include <QtGui/QColor>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QLogValueAxis;
class QAbstractSeries;
QT_END_NAMESPACE

namespace quantplan::ui::detail {

// Bytes per GB, the unit of every byte axis (GB = 1e9 bytes, STYLE.md rule 12).
inline constexpr double kBytesPerGb = 1e9;

// Milliseconds per second, for step-time axes.
inline constexpr double kMsPerS = 1e3;

// The colour of the `index`-th series of a chart (a fixed palette so that a scheme keeps its
// colour between the crossover chart of the window and that of the report).
QColor series_color(int index);

// A QString from UTF-8 text of core.
QString qstr(const std::string& text);

// A new chart with quantplan's look: no animation (rendering offscreen must not wait for one),
// legend at the bottom, `title` in bold.
QChart* new_chart(const QString& title);

// Attaches `series` to `axes` after adding it to `chart`.
void add_series(QChart* chart, QAbstractSeries* series, const std::vector<QAbstractAxis*>& axes);

// Hides the legend entry of `series` (for helper series such as dashed continuations).
void hide_legend_entry(QChart* chart, QAbstractSeries* series);

// The y of the polyline `points` (x ascending) at `x`, interpolated linearly in log(x) and
// log(y) between its neighbours: the position of a marker on a curve drawn on log-log axes.
// Outside the polyline's x range the end value is returned; precondition: points not empty,
// every x and y positive.
double interpolate_log_log(const std::vector<QPointF>& points, double x);

// The smallest power of `base` not above `value` and the largest power of `base` not below it
// give a log axis range that starts and ends on a labelled tick. Precondition: value > 0.
double floor_power(double value, double base);
double ceil_power(double value, double base);

// Sets a log axis to [lo, hi] widened by a hair, so that a bound that is itself a power of the base
// keeps its label (Qt places log labels at ceil(log(min)), which rounding can push past lo).
void set_log_range(QLogValueAxis* axis, double lo, double hi);

}  // namespace quantplan::ui::detail

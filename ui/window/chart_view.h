#pragma once
// A QChartView for the window's panels: it owns the chart it shows (replacing one deletes the
// previous), shows a hover tooltip that a panel computes from core's results, offers "Export
// chart" in its context menu, and scales the chart's fonts in presentation mode.
#include <functional>

#include <QtCharts/QChartView>
#include <QtCore/QPointF>
#include <QtCore/QString>

namespace quantplan::ui {

// Chart export size in device-independent pixels (16:10, large enough for a slide).
inline constexpr int kChartExportWidth = 1600;
inline constexpr int kChartExportHeight = 1000;

// Copies what `source` draws into `target` when both have the same structure (series and axes of
// the same types in the same order, bar sets of the same lengths, the same XY series empty): names,
// points, bar values, pens and brushes, axis ranges, titles and categories. Legend entries are not
// copied: ui/charts hides an entry only for a helper series or an empty one, which the structure
// fixes (tst_window checks a synced legend against a fresh chart's). Returns false, changing
// nothing, when the structures differ. Updating a shown chart this way costs a fraction of
// replacing it (no scene items are created), which keeps a control change within one frame.
bool sync_chart(QChart* target, QChart* source);

// Scales every font of `chart` (title, legend, axis labels and titles) by `factor` relative to
// Qt's defaults, so repeated calls do not compound.
void scale_chart_fonts(QChart* chart, double factor);

class ChartView;

// Shows a tooltip naming the category, bar set and value (GB) when the pointer is over a bar of
// any bar series of `view`'s chart. Call again after the chart was replaced.
void connect_bar_tooltips(ChartView* view);

// The chart view of a panel.
class ChartView : public QChartView {
    Q_OBJECT
public:
    // Text for the data under the cursor: called with the chart's value coordinates (x, y of the
    // first axis pair); an empty string hides the tooltip.
    using HoverText = std::function<QString(const QPointF& value)>;

    explicit ChartView(QWidget* parent = nullptr);
    // Deletes the chart shown (QChartView leaves it to its owner).
    ~ChartView() override;

    // Shows `chart` (taking ownership) and deletes the previous one.
    void replaceChart(QChart* chart);
    // Shows what `chart` draws (taking ownership): copied into the chart shown when sync_chart()
    // can, otherwise by replaceChart(). Returns true when the chart was replaced (new series and
    // bar sets, so per-series connections must be made again).
    bool showChart(QChart* chart);
    // Sets the function the hover tooltip asks for its text.
    void setHoverText(HoverText text) { hover_text_ = std::move(text); }
    // The font factor applied to every chart shown (1 normally, larger in presentation mode).
    void setFontScale(double factor);
    double fontScale() const { return font_scale_; }
    // The hover text at a point in view coordinates (what the tooltip would show there).
    QString hoverTextAt(const QPoint& view_position) const;

signals:
    // Asks the window to run its export dialog for this view's chart.
    void exportRequested();

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    HoverText hover_text_;
    double font_scale_ = 1.0;
};

}  // namespace quantplan::ui

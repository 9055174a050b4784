#pragma once
// What the window needs of every panel: its chart view (or none), its tables, and a file-name
// stem for exports. Panels are fed core results by the window and compute nothing themselves.
#include <QtCore/QList>
#include <QtCore/QString>
#include <QtWidgets/QTableView>
#include <QtWidgets/QWidget>

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace quantplan::ui {

class ChartView;

// A read-only table view with "Export table as CSV…" and "Copy" in its context menu.
class ResultTableView : public QTableView {
    Q_OBJECT
public:
    explicit ResultTableView(QWidget* parent = nullptr);

signals:
    // Asks the window to run its CSV export dialog for this view's model.
    void exportRequested();

protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void copySelection() const;
    // Rows as high as one line of the current font (presentation mode changes it).
    void fitRowHeight();
};

// The interface of a panel.
class Panel : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    // The chart view, or nullptr for a panel without a chart.
    virtual ChartView* chartView() const = 0;
    // The panel's tables, the main one first.
    virtual QList<ResultTableView*> tables() const = 0;
    // A short file-name stem for exports ("crossover", "checkpoint", ...).
    virtual QString exportName() const = 0;
    // Applies the presentation font factor to what a window font does not reach (charts).
    virtual void setFontScale(double factor);

    // The chart of the result shown now, built first if the panel was hidden when the result
    // arrived (hidden panels defer their charts: building one costs more than planning); nullptr
    // for a panel without a chart.
    QChart* chart();

protected:
    // Builds the chart of the stored result into chartView(). Panels with a chart override it.
    virtual void buildChart() {}
    // Marks the chart out of date: rebuilt now when the panel is visible, otherwise when shown.
    void chartChanged();
    void showEvent(QShowEvent* event) override;

private:
    bool chart_dirty_ = false;
};

}  // namespace quantplan::ui

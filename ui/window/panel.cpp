#include "ui/window/panel.h"

#include <algorithm>

#include <QtGui/QClipboard>
#include <QtGui/QContextMenuEvent>
#include <QtGui/QGuiApplication>
#include <QtWidgets/QHeaderView>
#include <QtWidgets/QMenu>

#include "ui/window/chart_view.h"

namespace quantplan::ui {

ResultTableView::ResultTableView(QWidget* parent) : QTableView(parent) {
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setAlternatingRowColors(true);
    setWordWrap(false);
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    verticalHeader()->setVisible(false);
    fitRowHeight();
}

void ResultTableView::fitRowHeight() {
    constexpr int kRowPaddingPx = 6;  // room above and below the text
    verticalHeader()->setMinimumSectionSize(fontMetrics().height() + kRowPaddingPx);
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + kRowPaddingPx);
}

void ResultTableView::changeEvent(QEvent* event) {
    QTableView::changeEvent(event);
    if (event->type() == QEvent::FontChange) fitRowHeight();
}

void ResultTableView::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    menu.addAction(tr("Copy"), this, &ResultTableView::copySelection);
    menu.addAction(tr("Export table as CSV…"), this, &ResultTableView::exportRequested);
    menu.exec(event->globalPos());
}

void ResultTableView::copySelection() const {
    if (!model()) return;
    QModelIndexList indexes = selectionModel() ? selectionModel()->selectedIndexes() : QModelIndexList{};
    std::sort(indexes.begin(), indexes.end());
    QString text;
    int row = -1;
    for (const QModelIndex& i : indexes) {
        if (row != -1) text += i.row() == row ? QStringLiteral("\t") : QStringLiteral("\n");
        text += i.data().toString();
        row = i.row();
    }
    QGuiApplication::clipboard()->setText(text);
}

void Panel::setFontScale(double factor) {
    if (ChartView* view = chartView()) view->setFontScale(factor);
}

QChart* Panel::chart() {
    if (!chartView()) return nullptr;
    if (chart_dirty_) {
        chart_dirty_ = false;
        buildChart();
    }
    return chartView()->chart();
}

void Panel::chartChanged() {
    chart_dirty_ = true;
    if (isVisible()) (void)chart();
}

void Panel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (chart_dirty_) (void)chart();
}

}  // namespace quantplan::ui

#include "ui/window/memory_panel.h"

#include <QtCore/QLocale>
#include <QtWidgets/QComboBox>
#include <QtWidgets/QHBoxLayout>
#include <QtWidgets/QLabel>
#include <QtWidgets/QSplitter>
#include <QtWidgets/QTabWidget>
#include <QtWidgets/QVBoxLayout>

#include "ui/charts/charts.h"
#include "ui/window/chart_view.h"
#include "ui/window/glossary.h"
#include "ui/window/table_models.h"

namespace quantplan::ui {

MemoryPanel::MemoryPanel(QWidget* parent) : Panel(parent) {
    view_ = new ChartView(this);
    view_->setObjectName(QStringLiteral("memoryChart"));
    view_box_ = new QComboBox(this);
    view_box_->addItem(tr("Step bytes and memory budget"));
    view_box_->addItem(tr("Bytes per decode step"));
    view_box_->addItem(tr("Memory budget and KV cache"));
    view_box_->setToolTip(glossary("kv_budget"));
    connect(view_box_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { chartChanged(); });
    model_ = new MemoryTableModel(this);
    table_ = new ResultTableView(this);
    table_->setModel(model_);
    table_->setObjectName(QStringLiteral("memoryTable"));
    what_if_model_ = new KvWhatIfModel(this);
    what_if_table_ = new ResultTableView(this);
    what_if_table_->setModel(what_if_model_);
    what_if_table_->setObjectName(QStringLiteral("kvWhatIfTable"));
    what_if_status_ = new QLabel(this);
    what_if_status_->setToolTip(tr("Every KV-cache dtype priced with the other controls unchanged."));

    auto* bar = new QHBoxLayout;
    auto* view_label = new QLabel(tr("&Show:"), this);
    view_label->setBuddy(view_box_);
    bar->addWidget(view_label);
    bar->addWidget(view_box_);
    bar->addStretch(1);
    auto* top = new QWidget(this);
    auto* top_layout = new QVBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    top_layout->addLayout(bar);
    top_layout->addWidget(view_, 1);

    auto* what_if = new QWidget(this);
    auto* what_if_layout = new QVBoxLayout(what_if);
    what_if_layout->setContentsMargins(0, 0, 0, 0);
    what_if_layout->addWidget(what_if_status_);
    what_if_layout->addWidget(what_if_table_, 1);
    auto* tabs = new QTabWidget(this);
    tabs->addTab(table_, tr("Budget and step bytes"));
    tabs->addTab(what_if, tr("What if the KV cache were…"));
    tabs->setTabToolTip(1, glossary("kv"));

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);
}

void MemoryPanel::setResult(const PlanResult& plan) {
    plan_ = plan;
    model_->setResult(plan_);
    chartChanged();
}

void MemoryPanel::setWhatIf(const KvWhatIf& what_if) {
    what_if_model_->setResult(what_if);
    what_if_status_->setText(tr("Max sequences and tokens/s at batch %1, context %2 for every KV-cache dtype (the current one marked).")
                                 .arg(plan_.request.workload.batch)
                                 .arg(plan_.request.workload.context_tokens));
}

void MemoryPanel::setWhatIfStatus(const QString& text) { what_if_status_->setText(text); }

void MemoryPanel::buildChart() {
    MemoryChartOptions options;
    options.view = view_box_->currentIndex() == 1   ? MemoryChartView::StepBytes
                   : view_box_->currentIndex() == 2 ? MemoryChartView::Budget
                                                    : MemoryChartView::Both;
    if (!view_->showChart(make_memory_chart(plan_, options))) return;  // updated in place
    connect_bar_tooltips(view_);
}

}  // namespace quantplan::ui

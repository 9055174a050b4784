#include "ui/window/checkpoint_panel.h"

#include <QtCore/QLocale>
#include <QtWidgets/QLabel>
#include <QtWidgets/QSplitter>
#include <QtWidgets/QVBoxLayout>

#include "core/scheme/scheme.h"
#include "ui/charts/charts.h"
#include "ui/window/chart_view.h"
#include "ui/window/glossary.h"
#include "ui/window/table_models.h"

namespace quantplan::ui {
namespace {

constexpr double kBytesPerGb = 1e9;  // display unit (STYLE.md rule 12)

QString gb_text(double bytes) { return QLocale::c().toString(bytes / kBytesPerGb, 'f', 3) + QStringLiteral(" GB"); }

}  // namespace

CheckpointPanel::CheckpointPanel(QWidget* parent) : Panel(parent) {
    view_ = new ChartView(this);
    view_->setObjectName(QStringLiteral("checkpointChart"));
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setToolTip(glossary("naive"));
    model_ = new CheckpointTableModel(this);
    table_ = new ResultTableView(this);
    table_->setModel(model_);
    table_->setObjectName(QStringLiteral("checkpointTable"));
    auto* top = new QWidget(this);
    auto* top_layout = new QVBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    top_layout->addWidget(view_, 1);
    top_layout->addWidget(summary_);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);
}

void CheckpointPanel::setResult(const PlanResult& plan, const std::optional<CheckpointScan>& scan) {
    plan_ = plan;
    actual_bytes_.reset();
    if (scan && scan->compared && scan->safetensors_files > 0) actual_bytes_ = scan->tensor_bytes();
    model_->setResult(plan, actual_bytes_);
    chartChanged();

    QStringList lines;
    if (!plan.schemes.empty()) {
        const CheckpointBudget& bf16 = plan.schemes.front().costs.budget;
        lines << tr("%1: %2 parameters, bf16 checkpoint %3. Bars: what each scheme stores; markers: the naive bits/16 expectation.")
                     .arg(QString::fromStdString(plan.request.model.name), QLocale::c().toString(static_cast<qlonglong>(plan.parameters.total)),
                          gb_text(static_cast<double>(bf16.bf16_bytes)));
    }
    if (scan) {
        const QString declared = scan->declared_method.isEmpty()
                                     ? tr("no quantization config")
                                     : tr("%1, %2 (%3)").arg(scan->declared_method, scan->declared_description, scan->declared_scheme);
        if (scan->compared && scan->safetensors_files > 0)
            lines << tr("Opened %1 (%2): %3 safetensors files, %4 on disk = %5 of tensors (the line on the chart) + %6 of headers. "
                        "The inspector predicts %7 for the declared config; %8 differences larger than the headers.")
                         .arg(scan->folder, declared)
                         .arg(scan->safetensors_files)
                         .arg(gb_text(static_cast<double>(scan->file_bytes)), gb_text(static_cast<double>(scan->tensor_bytes())),
                              QLocale::c().toString(static_cast<qlonglong>(scan->header_bytes)) + QStringLiteral(" bytes"),
                              gb_text(static_cast<double>(scan->predicted_tensor_bytes)))
                         .arg(scan->mismatch_count);
        else
            lines << tr("Opened %1 (%2): no readable safetensors files, so no real size to compare.").arg(scan->folder, declared);
        for (const QString& f : scan->findings) lines << QStringLiteral("  • ") + f;
        if (scan->unlisted_findings > 0)
            lines << tr("  … and %1 more (quantplan --headless --inspect FOLDER lists every one)").arg(scan->unlisted_findings);
    }
    summary_->setText(lines.join(QStringLiteral("\n")));
}

void CheckpointPanel::buildChart() {
    if (!view_->showChart(make_checkpoint_chart(plan_, actual_bytes_))) return;  // updated in place
    connect_bar_tooltips(view_);
}

}  // namespace quantplan::ui

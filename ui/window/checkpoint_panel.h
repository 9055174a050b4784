#pragma once
// Panel c: checkpoint size per scheme as stacked bars (quantized payload, scale/zero-point
// metadata, unquantized leftovers) against the naive bits/16 expectation and, when a checkpoint
// folder was opened, its real size; the byte budget table beside it.
#include <optional>

#include "core/plan/plan.h"
#include "ui/window/checkpoint_scan.h"
#include "ui/window/panel.h"

QT_BEGIN_NAMESPACE
class QLabel;
QT_END_NAMESPACE

namespace quantplan::ui {

class CheckpointTableModel;

// The checkpoint panel.
class CheckpointPanel : public Panel {
    Q_OBJECT
public:
    explicit CheckpointPanel(QWidget* parent = nullptr);

    // Shows `plan`'s checkpoint budgets, with `scan`'s real size when a checkpoint was opened.
    void setResult(const PlanResult& plan, const std::optional<CheckpointScan>& scan);

    // Panel: the checkpoint chart, the budget table, "checkpoint" for exports.
    ChartView* chartView() const override { return view_; }
    QList<ResultTableView*> tables() const override { return {table_}; }
    QString exportName() const override { return QStringLiteral("checkpoint"); }
    // The table's model and the summary under the chart (tests).
    CheckpointTableModel* model() const { return model_; }
    QLabel* summaryLabel() const { return summary_; }

protected:
    void buildChart() override;

private:
    PlanResult plan_;
    std::optional<std::uint64_t> actual_bytes_;
    ChartView* view_ = nullptr;
    QLabel* summary_ = nullptr;
    ResultTableView* table_ = nullptr;
    CheckpointTableModel* model_ = nullptr;
};

}  // namespace quantplan::ui

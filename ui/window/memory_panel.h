#pragma once
// Panel d: memory and admission. Bytes per decode step (weights, KV, activations), the GPU memory
// the engine splits into weights, workspaces and the KV-cache budget, the maximum sequences
// admitted, and the what-if of every KV-cache format.
#include "core/plan/plan.h"
#include "ui/window/kv_what_if.h"
#include "ui/window/panel.h"

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
QT_END_NAMESPACE

namespace quantplan::ui {

class KvWhatIfModel;
class MemoryTableModel;

// The memory panel.
class MemoryPanel : public Panel {
    Q_OBJECT
public:
    explicit MemoryPanel(QWidget* parent = nullptr);

    // Shows `plan`'s step bytes and admissions; the what-if table is marked out of date until
    // setWhatIf() delivers the one for this plan.
    void setResult(const PlanResult& plan);
    // Shows the KV-format what-if computed off the GUI thread for the current plan.
    void setWhatIf(const KvWhatIf& what_if);
    // Marks the what-if as being computed (progress in percent) or failed (a message).
    void setWhatIfStatus(const QString& text);

    // Panel: the memory chart, the budget table then the what-if table, "memory" for exports.
    ChartView* chartView() const override { return view_; }
    QList<ResultTableView*> tables() const override { return {table_, what_if_table_}; }
    QString exportName() const override { return QStringLiteral("memory"); }
    // The models and widgets (tests).
    MemoryTableModel* model() const { return model_; }
    KvWhatIfModel* whatIfModel() const { return what_if_model_; }
    QComboBox* viewBox() const { return view_box_; }
    QLabel* whatIfStatus() const { return what_if_status_; }

protected:
    void buildChart() override;

private:

    PlanResult plan_;
    ChartView* view_ = nullptr;
    QComboBox* view_box_ = nullptr;
    ResultTableView* table_ = nullptr;
    MemoryTableModel* model_ = nullptr;
    QLabel* what_if_status_ = nullptr;
    ResultTableView* what_if_table_ = nullptr;
    KvWhatIfModel* what_if_model_ = nullptr;
};

}  // namespace quantplan::ui

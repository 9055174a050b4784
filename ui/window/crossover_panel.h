#pragma once
// Panel a: step time and tokens/s against batch for every selected scheme, with ridge points,
// crossovers, the current batch as a cursor and the admitted-batch limit (ui/charts draws them),
// a hover readout of the exact values and bound, and the schemes at the current workload.
#include <cstdint>
#include <vector>

#include "core/plan/measured_overlay.h"
#include "core/plan/plan.h"
#include "core/plan/sweep.h"
#include "ui/window/panel.h"

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
QT_END_NAMESPACE

namespace quantplan::ui {

class SchemeTableModel;

// Batches at which the window sweeps a plan for this chart: 8 per octave from 1 to kMaxBatch,
// plus the requested batch, each scheme's admission limit and the batch just past it (so the
// admitted curve ends exactly there), and both integer neighbours of every crossover.
std::vector<std::int64_t> crossover_sweep_batches(const PlanResult& plan);

// The point of `sweep` for `scheme` whose batch is nearest `batch` in log distance, or nullptr.
const SweepPoint* nearest_sweep_point(const std::vector<SweepPoint>& sweep, const std::string& scheme, double batch);

// The crossover panel.
class CrossoverPanel : public Panel {
    Q_OBJECT
public:
    explicit CrossoverPanel(QWidget* parent = nullptr);

    // Shows `plan` and its sweep (core's batch_sweep of the plan at crossover_sweep_batches()),
    // and the measured decode steps of a calibration file over the curves (nullptr: none).
    // `calibration_label` names the file and device in the markers text.
    void setResult(const PlanResult& plan, const std::vector<SweepPoint>& sweep, const MeasuredOverlay* measured = nullptr,
                   const QString& calibration_label = {});
    // The measured points drawn (empty without a calibration file).
    const std::vector<MeasuredStepPoint>& measuredPoints() const { return measured_; }
    // The metric drawn: step time or tokens/s.
    void setMetricTokensPerS(bool tokens_per_s);

    // The hover readout at `batch` (what the tooltip shows there): every scheme's exact values.
    QString readoutAt(double batch) const;

    // Panel: the crossover chart, the schemes table, "crossover" for exports.
    ChartView* chartView() const override { return view_; }
    QList<ResultTableView*> tables() const override { return {table_}; }
    QString exportName() const override { return QStringLiteral("crossover"); }
    // The table's model and the panel's widgets (tests).
    SchemeTableModel* model() const { return model_; }
    QComboBox* metricBox() const { return metric_; }
    QLabel* markersLabel() const { return markers_; }

protected:
    void buildChart() override;

private:

    PlanResult plan_;
    std::vector<SweepPoint> sweep_;
    std::vector<MeasuredStepPoint> measured_;
    ChartView* view_ = nullptr;
    QComboBox* metric_ = nullptr;
    QLabel* markers_ = nullptr;
    ResultTableView* table_ = nullptr;
    SchemeTableModel* model_ = nullptr;
};

}  // namespace quantplan::ui

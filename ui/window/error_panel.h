#pragma once
// Panel b: granularity vs error. The error lab's ladder (per-tensor, per-channel, g128, g64, g32)
// for each selected weight format, with toggles for GPTQ, AWQ and SmoothQuant, the outlier
// magnitude and the activation format; layer error and weight error side by side, effective bits
// and usable levels, and the lab's decision log for the selected row. The lab runs off the GUI
// thread (GPTQ on a real tensor takes seconds); the panel shows the latest finished ladder.
#include <memory>
#include <vector>

#include <QtCore/QStringList>

#include "core/errorsim/error_lab.h"
#include "ui/window/panel.h"
#include "ui/window/planner_setup.h"
#include "ui/window/table_models.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QTextBrowser;
QT_END_NAMESPACE

namespace quantplan::ui {

class BackgroundJob;

// Every ladder the panel shows: one per weight format, with the layer they ran on.
struct ErrorLadders {
    QStringList labels;                                      // format names, e.g. "int4"
    std::vector<std::vector<errorsim::LadderRow>> ladders;   // one per label, ladder order
    QString layer_source;                                    // "synthetic 32 x 256" or the tensor's name
};

// Runs the ladders of `setup` on `layer` (generated from the setup when empty). Polls `context`
// between formats. Throws Error naming the control for a combination the lab refuses.
ErrorLadders run_error_ladders(const ErrorLabSetup& setup, const errorsim::Layer& layer, JobContext& context);

// The lab's ladders as a table: one row per format x granularity.
class ErrorLadderModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit ErrorLadderModel(QObject* parent = nullptr);
    // One row per format and granularity of `ladders`, in ladder order.
    void setResult(const ErrorLadders& ladders);
};

// The error panel.
class ErrorPanel : public Panel {
    Q_OBJECT
public:
    explicit ErrorPanel(QWidget* parent = nullptr);
    ~ErrorPanel() override;

    // Shows `setup` in the panel's controls (emitting nothing) and reruns the lab if it changed.
    void setLabSetup(const ErrorLabSetup& setup);
    // The setup the panel's controls show.
    ErrorLabSetup labSetup() const;

    // Loads one weight tensor (FILE.safetensors, tensor NAME) off the GUI thread; the ladders then
    // run on it with synthetic activations. An empty path returns to the synthetic layer.
    void useRealTensor(const QString& path, const QString& tensor_name);

    // The ladders shown now (empty until the first run finishes).
    const ErrorLadders& ladders() const { return ladders_; }
    // The job running the ladders, and the one reading a real tensor.
    BackgroundJob* job() const { return job_; }
    BackgroundJob* tensorJob() const { return tensor_job_; }

    // Panel: the ladder chart, the ladder table, "error" for exports.
    ChartView* chartView() const override { return view_; }
    QList<ResultTableView*> tables() const override { return {table_}; }
    QString exportName() const override { return QStringLiteral("error"); }
    // The model and the controls (tests, keyboard focus).
    ErrorLadderModel* model() const { return model_; }
    QCheckBox* gptqBox() const { return gptq_; }
    QCheckBox* awqBox() const { return awq_; }
    QCheckBox* smoothquantBox() const { return smoothquant_; }
    QDoubleSpinBox* outlierBox() const { return outlier_; }
    QComboBox* activationBox() const { return activation_; }
    QLabel* readout() const { return readout_; }

public slots:
    // Runs the lab for the current controls (latest wins).
    void rerun();

signals:
    // A control changed (the window keeps the setup, and so its settings, in step).
    void changed();
    void errorMessage(const QString& message);

protected:
    void buildChart() override;

private:
    void showLadders(const ErrorLadders& ladders);
    // Shows row `row` of the table in the readout and the decision log.
    void showRow(int row);

    ErrorLabSetup shown_;               // the setup of the ladders on screen (or being computed)
    bool has_run_ = false;
    int selected_row_ = -1;            // the table row shown in the readout (-1: the default)
    bool real_changed_ = false;         // the real tensor was loaded or dropped since the last run
    std::shared_ptr<const errorsim::RealWeights> real_weights_;  // a loaded real tensor (null: synthetic layer)
    QStringList extra_formats_;         // formats of the setup without a check box, kept as given
    std::int64_t seed_ = 1;             // the synthetic layer's seed (no control: scenarios set it)
    ErrorLadders ladders_;
    std::vector<QCheckBox*> format_boxes_;
    QCheckBox* gptq_ = nullptr;
    QCheckBox* awq_ = nullptr;
    QCheckBox* smoothquant_ = nullptr;
    QSlider* outlier_slider_ = nullptr;
    QDoubleSpinBox* outlier_ = nullptr;
    QComboBox* activation_ = nullptr;
    QLabel* readout_ = nullptr;
    QLabel* status_ = nullptr;
    ChartView* view_ = nullptr;
    ResultTableView* table_ = nullptr;
    ErrorLadderModel* model_ = nullptr;
    QTextBrowser* log_ = nullptr;
    BackgroundJob* job_ = nullptr;
    BackgroundJob* tensor_job_ = nullptr;
};

}  // namespace quantplan::ui

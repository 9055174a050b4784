#pragma once
// The left-hand controls of the planner window: model, GPU, schemes, batch, context, KV-cache
// dtype, kernel quality, efficiency profile, gpu_memory_utilization, tensor parallelism and the
// goal. It holds no logic: it shows a PlannerSetup and reports edits as one.
#include <utility>
#include <vector>

#include <QtWidgets/QWidget>

#include "core/checkpoint/model_config_json.h"
#include "core/hardware/gpu.h"
#include "ui/window/planner_setup.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QToolButton;
QT_END_NAMESPACE

namespace quantplan::ui {

class LogSlider;

// The controls. Every edit emits changed(); setSetup() changes nothing silently but emits nothing.
class ControlsPanel : public QWidget {
    Q_OBJECT
public:
    // `engines`: the engine control's entries as (label, --engine argument); empty: "vllm" alone.
    ControlsPanel(const std::vector<BundledModel>& models, const std::vector<GpuProfile>& gpus,
                  const std::vector<std::pair<QString, QString>>& engines = {}, QWidget* parent = nullptr);

    // Shows `setup` (adding model, GPU or scheme entries it names that the lists lack).
    void setSetup(const PlannerSetup& setup);
    // The setup the controls show (error-lab fields at their defaults: the error panel owns them).
    PlannerSetup setup() const;

    // Adds (or selects) a model entry for a path the user opened; `label` is what the list shows.
    void addModelEntry(const QString& argument, const QString& label);
    // Adds (or selects) a GPU entry for a profile file the user opened.
    void addGpuEntry(const QString& argument, const QString& label);
    // Sets the calibration file (empty: none) and, with `notify`, emits changed(); the box shows its
    // file name, the tooltip `label` (e.g. the device it was measured on) and the path.
    void setCalibration(const QString& path, const QString& label, bool notify = true);

    // Shows the fitted engine profile's step band in the profile control's `engine` entry (e.g.
    // "step -9% to +14%"); empty: none known.
    void setEngineProfileBand(const QString& band);

    // The widgets, for tests and keyboard focus.
    QComboBox* modelBox() const { return model_; }
    QComboBox* gpuBox() const { return gpu_; }
    QListWidget* schemeList() const { return schemes_; }
    QLineEdit* schemeEntry() const { return scheme_entry_; }
    LogSlider* batchSlider() const { return batch_; }
    LogSlider* contextSlider() const { return context_; }
    QComboBox* kvBox() const { return kv_; }
    QComboBox* kernelBox() const { return kernel_; }
    QComboBox* profileBox() const { return profile_; }
    QComboBox* engineBox() const { return engine_; }
    QDoubleSpinBox* memoryUtilizationBox() const { return gpu_mem_util_; }
    QSpinBox* tensorParallelBox() const { return tp_; }
    QCheckBox* expertParallelBox() const { return ep_; }
    QSpinBox* dataParallelBox() const { return dp_; }
    QSpinBox* nodesBox() const { return nodes_; }
    QComboBox* peerToPeerBox() const { return p2p_; }
    QComboBox* goalBox() const { return goal_; }
    QComboBox* accuracyBox() const { return accuracy_; }
    QLabel* calibrationLabel() const { return calibration_; }

    // Checks scheme `name`, adding it to the list when absent, without emitting changed().
    // Returns false (and reports errorMessage()) for a name the grammar refuses.
    bool checkScheme(const QString& name);

public slots:
    // Adds the scheme typed in the entry (checked); an invalid name is reported by errorMessage().
    void addTypedScheme();

signals:
    // A control changed (the window replans on the next event-loop turn).
    void changed();
    // The user asked to open a config.json, a checkpoint folder or a GPU profile (the window runs
    // the dialogs), or entered something refused (the window shows it in its banner).
    void openModelFileRequested();
    void openCheckpointRequested();
    void openGpuFileRequested();
    void openCalibrationRequested();
    void errorMessage(const QString& message);

private:
    // Checks `name` in the list, adding it when absent. Returns false for a name the grammar refuses.
    bool ensureScheme(const QString& name, bool checked);

    QComboBox* model_ = nullptr;
    QToolButton* open_model_ = nullptr;
    QComboBox* gpu_ = nullptr;
    QToolButton* open_gpu_ = nullptr;
    QListWidget* schemes_ = nullptr;
    QLineEdit* scheme_entry_ = nullptr;
    QPushButton* add_scheme_ = nullptr;
    LogSlider* batch_ = nullptr;
    LogSlider* context_ = nullptr;
    QComboBox* kv_ = nullptr;
    QComboBox* kernel_ = nullptr;
    QComboBox* profile_ = nullptr;
    QComboBox* engine_ = nullptr;
    QLabel* calibration_ = nullptr;
    QToolButton* open_calibration_ = nullptr;
    QToolButton* clear_calibration_ = nullptr;
    QDoubleSpinBox* gpu_mem_util_ = nullptr;
    QSpinBox* tp_ = nullptr;
    QCheckBox* ep_ = nullptr;
    QSpinBox* dp_ = nullptr;
    QSpinBox* nodes_ = nullptr;
    QComboBox* p2p_ = nullptr;
    QComboBox* goal_ = nullptr;
    QComboBox* accuracy_ = nullptr;
    QCheckBox* reasoning_ = nullptr;
    QCheckBox* eager_ = nullptr;
    // Speculative decoding: the method (off, eagle3, eagle, mtp, ngram; a draft model is the command
    // line's), K and the acceptance (empty: the published default).
    QComboBox* spec_method_ = nullptr;
    QSpinBox* spec_k_ = nullptr;
    QLineEdit* spec_acceptance_ = nullptr;
    QString spec_other_;  // a setup's spec the controls cannot show (draft:MODEL:K), kept as it came
    QCheckBox* mxfp8_ = nullptr;
    PlannerSetup hidden_;  // fields without a control here (engine limits), kept from setSetup()
};

}  // namespace quantplan::ui

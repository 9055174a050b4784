#pragma once
// The planner window: controls on the left, five panels (crossover, error lab, checkpoint size,
// memory and admission, decision) in tabs, lecture mode, presentation mode, exports, remembered
// settings. It resolves the model and GPU, calls core's plan() and batch_sweep() and hands the
// results to the panels; slow work goes through BackgroundJob. Every error lands in the banner
// at the top of the window, never on a terminal.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <QtCore/QString>
#include <QtWidgets/QMainWindow>

#include "core/check/check.h"
#include "core/checkpoint/model_config_json.h"
#include "core/hardware/calibration.h"
#include "core/plan/measured_overlay.h"
#include "core/plan/plan.h"
#include "core/plan/sweep.h"
#include "core/serve/disagg.h"
#include "ui/window/checkpoint_scan.h"
#include "ui/window/planner_setup.h"
#include "ui/window/scenario.h"

QT_BEGIN_NAMESPACE
class QDialog;
class QAction;
class QLabel;
class QProgressBar;
class QScrollArea;
class QSettings;
class QTabWidget;
class QTimer;
class QToolBar;
class QToolButton;
QT_END_NAMESPACE

namespace quantplan::ui {

class BackgroundJob;
class CheckDialog;
class ChartView;
class CapacityPanel;
class CheckpointPanel;
class ControlsPanel;
class CrossoverPanel;
class DecisionPanel;
class ErrorPanel;
class MemoryPanel;
class Panel;
class ResultTableView;

// Where the bundled data lives (the app finds it: build tree or <prefix>/share/quantplan).
struct DataPaths {
    std::filesystem::path models_dir;     // models/ with catalog.json
    std::filesystem::path gpus_dir;       // assets/gpus/
    std::filesystem::path scenarios_dir;  // assets/scenarios/
    std::filesystem::path icon_file;      // assets/icons/quantplan.svg
    std::filesystem::path engine_profiles_dir;  // assets/engines/profiles/ (empty: no engine profiles)
    std::filesystem::path engine_fit_file;      // assets/engines/fit/engine-fit.json
    std::filesystem::path serving_fit_file;     // assets/engines/fit/serving-fit.json (empty: no serving terms)
    std::filesystem::path gpu_prices_file;      // assets/prices/gpu-prices.json (empty: no bundled prices)
    std::filesystem::path launch_data_dir;      // the folder holding models/ and assets/engines/args/ (empty: no launch commands)
    std::filesystem::path spec_engines_file;      // assets/engines/speculative/speculative.json (empty: no speculative decoding)
    std::filesystem::path spec_measurements_file; // assets/measurements/speculative/speculative-decoding.json (acceptance defaults)
    std::filesystem::path spec_fit_file;          // assets/engines/fit/spec-fit.json
    std::filesystem::path interconnects_dir;      // assets/interconnects/ (empty: the Capacity panel's disaggregation has no links)
    std::filesystem::path kv_transfer_fit_file;   // assets/engines/fit/kv-transfer-fit.json (empty or absent: every connector at the line rate)
};

// How the window starts.
struct WindowOptions {
    DataPaths data;
    // The INI file settings are remembered in; empty: the platform's place for "quantplan".
    QString settings_file;
    // The setup to open with; nullopt: the remembered one (or the default setup).
    std::optional<PlannerSetup> initial_setup;
    // A scenario to open in lecture mode at start, and the step to show (0-based); empty: none.
    QString scenario_file;
    int scenario_step = 0;
    // A message for the error banner at start (e.g. a refused command-line option); empty: none.
    QString startup_error;
};

// The presentation mode's font factor for widgets (large enough to read from the back of a
// lecture room) and for charts (smaller: axis labels must still fit between their ticks).
inline constexpr double kPresentationFontScale = 1.5;
inline constexpr double kPresentationChartFontScale = 1.3;

// The setup remembered in `settings`, or the default setup when none (or an invalid one) is stored.
PlannerSetup remembered_setup(QSettings& settings);

// The planner window.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(WindowOptions options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // The setup the controls show (with the error panel's settings).
    PlannerSetup setup() const;
    // Shows `setup` in every control and replans at once.
    void setSetup(const PlannerSetup& setup);

    // The latest successful plan and its sweep (empty before the first success).
    const std::optional<PlanResult>& result() const { return result_; }
    const std::vector<SweepPoint>& sweep() const { return sweep_; }
    // The error banner's text; empty when the last replan succeeded.
    QString errorText() const;
    // Milliseconds the last replan took on the GUI thread (plan, sweep and every panel redraw).
    double lastReplanMs() const { return last_replan_ms_; }

    ControlsPanel* controls() const { return controls_; }
    CrossoverPanel* crossoverPanel() const { return crossover_; }
    ErrorPanel* errorPanel() const { return error_; }
    CheckpointPanel* checkpointPanel() const { return checkpoint_; }
    MemoryPanel* memoryPanel() const { return memory_; }
    DecisionPanel* decisionPanel() const { return decision_; }
    CapacityPanel* capacityPanel() const { return capacity_; }
    QTabWidget* tabs() const { return tabs_; }
    BackgroundJob* whatIfJob() const { return what_if_job_; }
    BackgroundJob* checkpointJob() const { return checkpoint_job_; }
    QToolBar* lectureBar() const { return lecture_bar_; }
    QLabel* lectureNote() const { return lecture_note_; }

    // Lecture mode: the open scenario and the step shown (-1 without a scenario).
    const std::optional<Scenario>& scenario() const { return scenario_; }
    int stepIndex() const { return step_; }
    // Opens a scenario (several steps: lecture mode at step `step`, 0-based, clamped) or a saved
    // setup (one step: applied). Returns false and shows the error in the banner when refused.
    bool openScenarioFile(const QString& path, int step = 0);
    void showScenario(const Scenario& scenario, int step = 0);
    // Leaves lecture mode (the setup stays).
    void closeScenario();
    // Saves the current setup as a one-step scenario; false (and the banner) on failure.
    bool saveSetupFile(const QString& path);

    // Presentation mode: large fonts everywhere, charts included.
    void setPresentationMode(bool on);
    bool presentationMode() const { return presentation_; }

    // Exports: the panel's chart as PNG or SVG (by the path's extension), a table as CSV.
    // False (and the banner) on failure.
    bool exportChart(Panel* panel, const QString& path);
    bool exportTable(ResultTableView* table, const QString& path);

    // Opens a checkpoint folder off the GUI thread (progress in the status bar, Esc cancels): its
    // config.json becomes the model and its real size is drawn on the checkpoint chart.
    void openCheckpointFolder(const QString& path);
    // Opens a config.json (or folder) as the model; a GPU profile file as the GPU.
    bool openModelPath(const QString& path);
    bool openGpuPath(const QString& path);
    // Opens a calibration file written by quantplan --validate: its measured decode steps overlay
    // the crossover chart, and the `measured` profile becomes available. False (and the banner) on failure.
    bool openCalibrationPath(const QString& path);
    // Checks a vLLM or SGLang startup log or benchmark result against the prediction (core/check):
    // a table of every logged quantity beside its prediction in a dialog, and for a benchmark
    // result its measured TPOT as a point on the crossover chart. The window's model and GPU stand
    // in for what the file does not name. False (and the banner) when the file is refused.
    bool openCheckPath(const QString& path);
    // The last check, and its dialog (null before the first).
    const std::optional<check::CheckResult>& lastCheck() const { return last_check_; }
    QDialog* checkDialog() const;

    // The opened checkpoint's scan, when one is shown.
    const std::optional<CheckpointScan>& checkpointScan() const { return scan_; }

    // Every panel, in tab order.
    QList<Panel*> panels() const;

public slots:
    // Replans now (the controls schedule this for the next event-loop turn).
    void replanNow();
    void nextStep();
    void previousStep();
    // Cancels every running background job.
    void cancelJobs();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildActions();
    void buildLayout();
    void scheduleReplan();
    void showError(const QString& message);
    void clearError();
    void showStep(int index);
    void startWhatIf(const PlanRequest& request);
    void saveSettings();
    void restoreWindowSettings();
    void updateTitle();
    // Sizes the controls' dock to the controls at the current font.
    void fitControlsWidth();
    void exportChartDialog(Panel* panel);
    void exportTableDialog(ResultTableView* table, const QString& stem);
    QString chooseSaveFile(const QString& title, const QString& suggested, const QString& filters);
    QString chooseOpenFile(const QString& title, const QString& filters);
    const ModelConfig& resolvedModel(const QString& argument);
    const GpuProfile& resolvedGpu(const QString& argument);
    const Calibration& resolvedCalibration(const QString& path);
    Panel* currentPanel() const;

    WindowOptions options_;
    std::unique_ptr<QSettings> settings_;
    std::vector<BundledModel> bundled_models_;
    std::vector<GpuProfile> bundled_gpus_;
    std::optional<engine::EngineCatalog> engine_catalog_;  // the bundled engine profiles and their fit
    std::optional<engine::SpecCatalog> spec_catalog_;      // speculative decoding's version limits and acceptance defaults
    SpecData spec_data_;                                   // points at spec_catalog_ (null catalog: none bundled)
    std::optional<check::CheckResult> last_check_;          // File > Check against a log
    std::vector<MeasuredStepPoint> check_points_;           // its measured TPOT, drawn on the crossover chart
    QString check_model_, check_gpu_;                        // the model and GPU it was priced on (points drop when they change)
    CheckDialog* check_dialog_ = nullptr;     // File > Check against a log: the side-by-side table
    std::map<QString, ModelConfig> model_cache_;
    std::map<QString, GpuProfile> gpu_cache_;
    std::map<QString, Calibration> calibration_cache_;

    ControlsPanel* controls_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    CrossoverPanel* crossover_ = nullptr;
    ErrorPanel* error_ = nullptr;
    CheckpointPanel* checkpoint_ = nullptr;
    MemoryPanel* memory_ = nullptr;
    DecisionPanel* decision_ = nullptr;
    CapacityPanel* capacity_ = nullptr;
    std::map<std::string, double> gpu_prices_;  // the bundled default prices, USD per GPU-hour
    std::map<std::string, serve::TransferTerms> transfer_fit_;   // the connectors' fitted transfer terms (DataPaths::kv_transfer_fit_file)
    QScrollArea* controls_scroll_ = nullptr;
    QLabel* banner_ = nullptr;
    QToolBar* lecture_bar_ = nullptr;
    QLabel* lecture_title_ = nullptr;
    QLabel* lecture_note_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QToolButton* cancel_button_ = nullptr;
    QTimer* replan_timer_ = nullptr;
    QAction* presentation_action_ = nullptr;
    QAction* next_action_ = nullptr;
    QAction* previous_action_ = nullptr;
    BackgroundJob* what_if_job_ = nullptr;
    BackgroundJob* checkpoint_job_ = nullptr;

    std::optional<PlanResult> result_;
    std::vector<SweepPoint> sweep_;
    std::optional<CheckpointScan> scan_;
    QString scan_model_;  // the model argument the scan belongs to
    std::optional<Scenario> scenario_;
    int step_ = -1;
    bool presentation_ = false;
    double last_replan_ms_ = 0;
    QString last_directory_;
};

}  // namespace quantplan::ui

#include "ui/window/main_window.h"

#include <algorithm>
#include <chrono>

#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QJsonDocument>
#include <QtCore/QSettings>
#include <QtCore/QTimer>
#include <QtGui/QAction>
#include <QtGui/QCloseEvent>
#include <QtGui/QIcon>
#include <QtGui/QKeySequence>
#include <QtWidgets/QApplication>
#include <QtWidgets/QDialog>
#include <QtWidgets/QDockWidget>
#include <QtWidgets/QHeaderView>
#include <QtWidgets/QTableWidget>
#include <QtWidgets/QFileDialog>
#include <QtWidgets/QLabel>
#include <QtWidgets/QMenu>
#include <QtWidgets/QMenuBar>
#include <QtWidgets/QMessageBox>
#include <QtWidgets/QProgressBar>
#include <QtWidgets/QScrollArea>
#include <QtWidgets/QScrollBar>
#include <QtWidgets/QSpinBox>
#include <QtWidgets/QStatusBar>
#include <QtWidgets/QTabWidget>
#include <QtWidgets/QToolBar>
#include <QtWidgets/QToolButton>
#include <QtWidgets/QVBoxLayout>

#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/checkpoint/model_config_json.h"
#include "core/serve/disagg.h"
#include "core/serve/gpu_prices.h"
#include "ui/charts/charts.h"
#include "ui/window/background_job.h"
#include "ui/window/capacity_panel.h"
#include "ui/window/chart_view.h"
#include "ui/window/check_dialog.h"
#include "ui/window/checkpoint_panel.h"
#include "ui/window/controls_panel.h"
#include "ui/window/crossover_panel.h"
#include "ui/window/decision_panel.h"
#include "ui/window/launch_bar.h"
#include "ui/window/error_panel.h"
#include "ui/window/kv_what_if.h"
#include "ui/window/log_slider.h"
#include "ui/window/memory_panel.h"
#include "ui/window/table_models.h"

namespace quantplan::ui {
namespace {

// Settings keys.
constexpr char kSetupKey[] = "planner/setup";
constexpr char kGeometryKey[] = "window/geometry";
constexpr char kStateKey[] = "window/state";
constexpr char kTabKey[] = "window/tab";
constexpr char kPresentationKey[] = "window/presentation";
constexpr char kDirectoryKey[] = "window/last_directory";
// Bumped when the window's dock or toolbar layout changes, so an old saved state is not applied.
constexpr int kWindowStateVersion = 1;

// The window's size before any is remembered: the issue's 1280 x 800 target.
constexpr int kDefaultWidth = 1280;
constexpr int kDefaultHeight = 800;

QString path_text(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

}  // namespace

PlannerSetup remembered_setup(QSettings& settings) {
    const QByteArray text = settings.value(QLatin1String(kSetupKey)).toByteArray();
    if (text.isEmpty()) return default_setup();
    const QJsonDocument doc = QJsonDocument::fromJson(text);
    if (!doc.isObject()) return default_setup();
    try {
        return setup_from_json(doc.object(), default_setup(), QStringLiteral("settings"));
    } catch (const Error&) {
        return default_setup();  // a setting from another version: start from the defaults
    }
}

MainWindow::MainWindow(WindowOptions options, QWidget* parent) : QMainWindow(parent), options_(std::move(options)) {
    setObjectName(QStringLiteral("plannerWindow"));
    settings_ = options_.settings_file.isEmpty()
                    ? std::make_unique<QSettings>(QStringLiteral("quantplan"), QStringLiteral("quantplan"))
                    : std::make_unique<QSettings>(options_.settings_file, QSettings::IniFormat);
    last_directory_ = settings_->value(QLatin1String(kDirectoryKey), QDir::homePath()).toString();

    QString load_error;
    try {
        bundled_models_ = load_model_catalog(options_.data.models_dir);
    } catch (const std::exception& e) {
        load_error = QString::fromUtf8(e.what());
    }
    try {
        bundled_gpus_ = load_gpu_profiles(options_.data.gpus_dir);
    } catch (const std::exception& e) {
        load_error = QString::fromUtf8(e.what());
    }
    for (const GpuProfile& g : bundled_gpus_) gpu_cache_[QString::fromStdString(g.id)] = g;
    if (!options_.data.engine_profiles_dir.empty()) {
        try {
            engine_catalog_ = engine::load_engine_catalog(options_.data.engine_profiles_dir, options_.data.engine_fit_file);
            // The serving fit's terms and bands, as the command line applies them by default.
            if (!options_.data.serving_fit_file.empty()) {
                const std::string path = options_.data.serving_fit_file.string();
                engine::apply_serving_fit(*engine_catalog_, engine::parse_serving_fit(read_text_file(path, path), path));
            }
        } catch (const std::exception& e) {
            load_error = QString::fromUtf8(e.what());
        }
    }
    if (!options_.data.spec_engines_file.empty()) {
        try {
            spec_catalog_ = engine::load_spec_catalog(options_.data.spec_engines_file.string(), options_.data.spec_measurements_file.string(),
                                                      options_.data.spec_fit_file.string());
            spec_data_.catalog = &*spec_catalog_;
            spec_data_.models_dir = options_.data.models_dir;
        } catch (const std::exception& e) {
            load_error = QString::fromUtf8(e.what());
        }
    }
    if (!options_.data.gpu_prices_file.empty()) {
        try {
            const std::string path = options_.data.gpu_prices_file.string();
            for (const auto& [id, p] : serve::default_gpu_prices(serve::parse_gpu_prices(read_text_file(path, path, 4 << 20), path)))
                gpu_prices_[id] = p.usd_per_gpu_hour;
        } catch (const std::exception& e) {
            load_error = QString::fromUtf8(e.what());
        }
    }
    if (!options_.data.kv_transfer_fit_file.empty()) {
        try {
            transfer_fit_ = serve::load_transfer_fit(options_.data.kv_transfer_fit_file);
        } catch (const std::exception& e) {
            load_error = QString::fromUtf8(e.what());
        }
    }

    what_if_job_ = new BackgroundJob(this);
    checkpoint_job_ = new BackgroundJob(this);
    replan_timer_ = new QTimer(this);
    replan_timer_->setSingleShot(true);
    replan_timer_->setInterval(0);
    connect(replan_timer_, &QTimer::timeout, this, &MainWindow::replanNow);

    buildLayout();
    buildActions();
    if (!options_.data.icon_file.empty()) setWindowIcon(QIcon(path_text(options_.data.icon_file)));
    resize(kDefaultWidth, kDefaultHeight);
    restoreWindowSettings();

    const PlannerSetup initial = options_.initial_setup ? *options_.initial_setup : remembered_setup(*settings_);
    setSetup(initial);
    if (!load_error.isEmpty()) showError(load_error);
    if (!options_.startup_error.isEmpty()) showError(options_.startup_error);
    if (!options_.scenario_file.isEmpty()) openScenarioFile(options_.scenario_file, options_.scenario_step);
}

MainWindow::~MainWindow() {
    cancelJobs();
}

// --- Layout -----------------------------------------------------------------------------------

void MainWindow::buildLayout() {
    // The engine control's entries: each engine's newest profile, then every profile by its range.
    std::vector<std::pair<QString, QString>> engines;
    if (engine_catalog_) {
        for (const char* name : {"vllm", "sglang"})
            for (auto it = engine_catalog_->profiles.rbegin(); it != engine_catalog_->profiles.rend(); ++it)
                if (it->engine == name) {
                    engines.emplace_back(QString::fromLatin1(name) + tr(" (newest: %1)").arg(QString::fromStdString(it->title)), QString::fromLatin1(name));
                    break;
                }
        for (const engine::EngineProfile& p : engine_catalog_->profiles)
            engines.emplace_back(QString::fromStdString(p.title), QString::fromStdString(p.engine + "@" + p.min_version.text));
    }
    controls_ = new ControlsPanel(bundled_models_, bundled_gpus_, engines, this);
    auto* scroll = new QScrollArea(this);
    controls_scroll_ = scroll;
    scroll->setWidget(controls_);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    fitControlsWidth();
    auto* dock = new QDockWidget(tr("Controls"), this);
    dock->setObjectName(QStringLiteral("controlsDock"));
    dock->setWidget(scroll);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    crossover_ = new CrossoverPanel(this);
    error_ = new ErrorPanel(this);
    checkpoint_ = new CheckpointPanel(this);
    memory_ = new MemoryPanel(this);
    decision_ = new DecisionPanel(this);
    capacity_ = new CapacityPanel(this);
    capacity_->setInterconnects(options_.data.interconnects_dir.empty() ? std::vector<serve::Interconnect>{}
                                                                        : serve::load_interconnects(options_.data.interconnects_dir));
    capacity_->setTransferFit(transfer_fit_);
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName(QStringLiteral("panels"));
    tabs_->addTab(crossover_, tr("&1 Batch crossover"));
    tabs_->setTabToolTip(0, tr("Step time and tokens/s against batch for every scheme: ridge points, crossovers, the admission limit."));
    tabs_->addTab(error_, tr("&2 Granularity vs error"));
    tabs_->setTabToolTip(1, tr("One linear layer quantized for real: the error of each granularity, format and method."));
    tabs_->addTab(checkpoint_, tr("&3 Checkpoint size"));
    tabs_->setTabToolTip(2, tr("Where a checkpoint's bytes go: payload, scales and zero points, unquantized leftovers."));
    tabs_->addTab(memory_, tr("&4 Memory and admission"));
    tabs_->setTabToolTip(3, tr("Bytes per decode step, the KV-cache budget and how many sequences it admits."));
    tabs_->addTab(decision_, tr("&5 Decision"));
    tabs_->setTabToolTip(4, tr("The recommendation for this workload and why, with the engines' warnings."));
    tabs_->addTab(capacity_, tr("&6 Capacity"));
    tabs_->setTabToolTip(5, tr("Traffic and SLOs in: latency percentiles, the highest rate per scheme, replicas, GPUs and cost out."));

    banner_ = new QLabel(this);
    banner_->setObjectName(QStringLiteral("errorBanner"));
    banner_->setWordWrap(true);
    banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    banner_->setStyleSheet(QStringLiteral("QLabel { background: #fde2e1; color: #7a1c17; border: 1px solid #e5a19c; padding: 6px; }"));
    banner_->hide();
    lecture_note_ = new QLabel(this);
    lecture_note_->setObjectName(QStringLiteral("lectureNote"));
    lecture_note_->setWordWrap(true);
    lecture_note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    lecture_note_->setStyleSheet(QStringLiteral("QLabel { background: #eef4fb; border: 1px solid #b8cde6; padding: 6px; }"));
    lecture_note_->hide();

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(banner_);
    layout->addWidget(lecture_note_);
    layout->addWidget(tabs_, 1);
    setCentralWidget(central);

    progress_ = new QProgressBar(this);
    progress_->setRange(0, 100);
    progress_->setMaximumWidth(220);
    progress_->hide();
    cancel_button_ = new QToolButton(this);
    cancel_button_->setText(tr("Cancel"));
    cancel_button_->setToolTip(tr("Cancel the background work (Esc)"));
    cancel_button_->hide();
    connect(cancel_button_, &QToolButton::clicked, this, &MainWindow::cancelJobs);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_button_);

    connect(controls_, &ControlsPanel::changed, this, &MainWindow::scheduleReplan);
    connect(controls_, &ControlsPanel::errorMessage, this, &MainWindow::showError);
    connect(controls_, &ControlsPanel::openModelFileRequested, this, [this] {
        const QString path = chooseOpenFile(tr("Open a model's config.json"), tr("Hugging Face config (config.json *.json)"));
        if (!path.isEmpty()) openModelPath(path);
    });
    connect(controls_, &ControlsPanel::openCheckpointRequested, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a checkpoint folder"), last_directory_);
        if (!dir.isEmpty()) openCheckpointFolder(dir);
    });
    connect(controls_, &ControlsPanel::openGpuFileRequested, this, [this] {
        const QString path = chooseOpenFile(tr("Open a GPU profile"), tr("GPU profile (*.json)"));
        if (!path.isEmpty()) openGpuPath(path);
    });
    connect(controls_, &ControlsPanel::openCalibrationRequested, this, [this] {
        const QString path = chooseOpenFile(tr("Open a calibration file (quantplan --validate)"), tr("Calibration (*.json)"));
        if (!path.isEmpty()) openCalibrationPath(path);
    });
    connect(error_, &ErrorPanel::errorMessage, this, &MainWindow::showError);
    connect(capacity_, &CapacityPanel::errorMessage, this, &MainWindow::showError);
    // Launch commands and deployments (docs/launch.md) from the data folder models/ sits in.
    for (LaunchBar* bar : {decision_->launchBar(), capacity_->launchBar()}) {
        bar->setDataDir(options_.data.launch_data_dir);
        connect(bar, &LaunchBar::errorMessage, this, &MainWindow::showError);
    }

    // Exports from each panel's context menus.
    for (Panel* panel : panels()) {
        if (ChartView* view = panel->chartView()) connect(view, &ChartView::exportRequested, this, [this, panel] { exportChartDialog(panel); });
        for (ResultTableView* table : panel->tables())
            connect(table, &ResultTableView::exportRequested, this, [this, table, panel] { exportTableDialog(table, panel->exportName()); });
    }

    // Background work: progress and cancel in the status bar.
    for (BackgroundJob* job : {checkpoint_job_, error_->job(), error_->tensorJob(), capacity_->job()}) {
        connect(job, &BackgroundJob::started, this, [this](const QString& label) {
            progress_->setValue(0);
            progress_->setFormat(label + QStringLiteral(" %p%"));
            progress_->show();
            cancel_button_->show();
        });
        connect(job, &BackgroundJob::progress, this, [this](int percent, const QString& text) {
            progress_->setValue(percent);
            statusBar()->showMessage(text, 3000);
        });
        const auto done = [this] {
            if (!checkpoint_job_->isRunning() && !error_->job()->isRunning() && !error_->tensorJob()->isRunning() && !capacity_->job()->isRunning()) {
                progress_->hide();
                cancel_button_->hide();
            }
        };
        connect(job, &BackgroundJob::finished, this, done);
        connect(job, &BackgroundJob::cancelled, this, [this, done] {
            done();
            statusBar()->showMessage(tr("Cancelled"), 3000);
        });
        connect(job, &BackgroundJob::failed, this, [this, done](const QString& message) {
            done();
            showError(message);
        });
    }
    connect(what_if_job_, &BackgroundJob::failed, this, [this](const QString& m) { memory_->setWhatIfStatus(tr("What-if failed: %1").arg(m)); });
}

void MainWindow::buildActions() {
    // File.
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open setup or scenario…"), QKeySequence::Open, this, [this] {
        const QString path = chooseOpenFile(tr("Open a setup or scenario"), tr("quantplan setup or scenario (*.json)"));
        if (!path.isEmpty()) openScenarioFile(path);
    });
    file->addAction(tr("&Save setup…"), QKeySequence::Save, this, [this] {
        const QString path = chooseSaveFile(tr("Save the current setup"), QStringLiteral("setup.json"), tr("quantplan setup (*.json)"));
        if (!path.isEmpty()) saveSetupFile(path);
    });
    file->addSeparator();
    file->addAction(tr("Open model &config.json…"), QKeySequence(Qt::CTRL | Qt::Key_M), controls_, &ControlsPanel::openModelFileRequested);
    file->addAction(tr("Open check&point folder…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), controls_,
                    &ControlsPanel::openCheckpointRequested);
    file->addAction(tr("Open &GPU profile…"), QKeySequence(Qt::CTRL | Qt::Key_G), controls_, &ControlsPanel::openGpuFileRequested);
    file->addAction(tr("Open &calibration…"), controls_, &ControlsPanel::openCalibrationRequested);
    file->addAction(tr("Chec&k against a log…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Check against a vLLM or SGLang log or benchmark result"), last_directory_,
                                                          tr("Logs and results (*.log *.txt *.json *.jsonl);;All files (*)"));
        if (!path.isEmpty()) openCheckPath(path);
    });
    file->addSeparator();
    file->addAction(tr("&Export chart…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
        if (Panel* p = currentPanel(); p && p->chartView()) exportChartDialog(p);
        else showError(tr("This panel has no chart; export its table with Ctrl+Shift+E."));
    });
    file->addAction(tr("Export &table as CSV…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), this, [this] {
        Panel* p = currentPanel();
        if (!p || p->tables().isEmpty()) return;
        ResultTableView* table = p->tables().constFirst();
        for (ResultTableView* t : p->tables())
            if (t->hasFocus() || t->isAncestorOf(QApplication::focusWidget())) table = t;
        exportTableDialog(table, p->exportName());
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    // View.
    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < tabs_->count(); ++i) {
        QAction* a = view->addAction(tabs_->tabText(i).remove(QLatin1Char('&')), this, [this, i] { tabs_->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    view->addSeparator();
    presentation_action_ = view->addAction(tr("&Presentation mode (large fonts)"), this, [this](bool on) { setPresentationMode(on); });
    presentation_action_->setCheckable(true);
    presentation_action_->setShortcut(QKeySequence(Qt::Key_F5));
    QAction* full = view->addAction(tr("&Full screen"), this, [this](bool on) { on ? showFullScreen() : showNormal(); });
    full->setCheckable(true);
    full->setShortcut(QKeySequence::FullScreen);
    view->addAction(tr("Focus &batch"), QKeySequence(Qt::CTRL | Qt::Key_B), this, [this] {
        controls_->batchSlider()->spinBox()->setFocus();
        controls_->batchSlider()->spinBox()->selectAll();
    });

    // Lecture.
    QMenu* lecture = menuBar()->addMenu(tr("&Lecture"));
    const QDir scenarios(path_text(options_.data.scenarios_dir));
    const QStringList files = scenarios.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QString& f : files) {
        const QString path = scenarios.filePath(f);
        QString label = QFileInfo(f).completeBaseName();
        try {
            label = load_scenario(path).name;
        } catch (const Error&) {
            // Listed by file name; opening it will show why it is refused.
        }
        lecture->addAction(label, this, [this, path] { openScenarioFile(path); });
    }
    if (!files.isEmpty()) lecture->addSeparator();
    next_action_ = lecture->addAction(tr("&Next step"), this, &MainWindow::nextStep);
    next_action_->setShortcuts({QKeySequence(Qt::Key_PageDown), QKeySequence(Qt::ALT | Qt::Key_Right)});
    previous_action_ = lecture->addAction(tr("&Previous step"), this, &MainWindow::previousStep);
    previous_action_->setShortcuts({QKeySequence(Qt::Key_PageUp), QKeySequence(Qt::ALT | Qt::Key_Left)});
    lecture->addAction(tr("&Close scenario"), this, &MainWindow::closeScenario);

    // Help.
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard shortcuts"), QKeySequence::HelpContents, this, [this] {
        QMessageBox::information(
            this, tr("Keyboard shortcuts"),
            tr("<table>"
               "<tr><td>Ctrl+1 … Ctrl+5</td><td>show a panel</td></tr>"
               "<tr><td>Ctrl+O / Ctrl+S</td><td>open / save a setup or scenario</td></tr>"
               "<tr><td>Page Down / Page Up</td><td>next / previous lecture step</td></tr>"
               "<tr><td>F5</td><td>presentation mode</td></tr><tr><td>F11</td><td>full screen</td></tr>"
               "<tr><td>Ctrl+E / Ctrl+Shift+E</td><td>export the chart (PNG, SVG) / the table (CSV)</td></tr>"
               "<tr><td>Ctrl+M / Ctrl+Shift+O / Ctrl+G</td><td>open a config.json / a checkpoint folder / a GPU profile</td></tr>"
               "<tr><td>Ctrl+B</td><td>focus the batch control</td></tr>"
               "<tr><td>Esc</td><td>cancel background work</td></tr></table>"));
    });
    help->addAction(tr("&About quantplan"), this, [this] {
        QMessageBox::about(this, tr("About quantplan"),
                           tr("<b>quantplan</b> %1<br>Which quantization scheme, on this GPU, for this traffic?<br>"
                              "Every number comes from the roofline and byte models in docs/.")
                               .arg(QCoreApplication::applicationVersion()));
    });

    // Lecture toolbar: hidden until a scenario is open.
    lecture_bar_ = new QToolBar(tr("Lecture"), this);
    lecture_bar_->setObjectName(QStringLiteral("lectureBar"));
    lecture_bar_->addAction(previous_action_);
    lecture_title_ = new QLabel(lecture_bar_);
    lecture_title_->setObjectName(QStringLiteral("lectureTitle"));
    lecture_bar_->addWidget(lecture_title_);
    lecture_bar_->addAction(next_action_);
    addToolBar(Qt::TopToolBarArea, lecture_bar_);
    lecture_bar_->hide();
    next_action_->setEnabled(false);
    previous_action_->setEnabled(false);

    auto* cancel = new QAction(this);
    cancel->setShortcut(QKeySequence(Qt::Key_Escape));
    cancel->setShortcutContext(Qt::WindowShortcut);
    connect(cancel, &QAction::triggered, this, &MainWindow::cancelJobs);
    addAction(cancel);
}

// --- Planning ---------------------------------------------------------------------------------

PlannerSetup MainWindow::setup() const {
    PlannerSetup s = controls_->setup();
    s.error_lab = error_->labSetup();
    return s;
}

void MainWindow::setSetup(const PlannerSetup& s) {
    controls_->setSetup(s);
    error_->setLabSetup(s.error_lab);
    replan_timer_->stop();
    replanNow();
}

void MainWindow::scheduleReplan() { replan_timer_->start(); }

const ModelConfig& MainWindow::resolvedModel(const QString& argument) {
    auto it = model_cache_.find(argument);
    if (it == model_cache_.end()) it = model_cache_.emplace(argument, resolve_model(argument.toStdString(), options_.data.models_dir)).first;
    return it->second;
}

const GpuProfile& MainWindow::resolvedGpu(const QString& argument) {
    auto it = gpu_cache_.find(argument);
    if (it == gpu_cache_.end()) it = gpu_cache_.emplace(argument, resolve_gpu(argument.toStdString(), options_.data.gpus_dir)).first;
    return it->second;
}

const Calibration& MainWindow::resolvedCalibration(const QString& path) {
    auto it = calibration_cache_.find(path);
    if (it == calibration_cache_.end()) it = calibration_cache_.emplace(path, load_calibration(path.toStdString())).first;
    return it->second;
}

void MainWindow::replanNow() {
    const auto start = std::chrono::steady_clock::now();
    PlannerSetup s = setup();
    // A calibration file that cannot be read (a remembered setup's file since deleted, a scenario's
    // wrong path) is dropped with a message; the plan goes on without it.
    QString calibration_error;
    if (!s.calibration.isEmpty()) {
        try {
            (void)resolvedCalibration(s.calibration);
        } catch (const std::exception& e) {
            calibration_error = QString::fromUtf8(e.what()) + tr("  (planning without it)");
            controls_->setCalibration({}, {}, /*notify=*/false);
            s = setup();
        }
    }
    std::optional<MeasuredOverlay> measured;
    QString calibration_label;
    try {
        validate_setup(s);
        const ModelConfig& model = resolvedModel(s.model);
        const GpuProfile& gpu = resolvedGpu(s.gpu);
        const Calibration* calibration = s.calibration.isEmpty() ? nullptr : &resolvedCalibration(s.calibration);
        PlanResult result = plan(plan_request(s, model, gpu, calibration, engine_catalog_ ? &*engine_catalog_ : nullptr, &spec_data_));
        std::vector<SweepPoint> sweep = batch_sweep(result, crossover_sweep_batches(result));
        if (calibration) {
            measured = measured_step_points(*calibration, result);
            calibration_label = QFileInfo(s.calibration).fileName() + QStringLiteral(", ") + QString::fromStdString(calibration->device.name);
        }
        result_ = std::move(result);
        sweep_ = std::move(sweep);
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()) + (result_ ? tr("  (the panels show the last valid plan)") : QString()));
        return;
    }
    if (!calibration_error.isEmpty()) showError(calibration_error);
    else if (const std::optional<std::string> none = no_scheme_fits(*result_)) showError(QString::fromStdString(*none));
    else clearError();
    if (scan_ && scan_model_ != s.model) scan_.reset();  // the real size belonged to another model
    // A checked benchmark's measured TPOT joins the calibration's points on the crossover chart,
    // while the model and GPU are the ones it was checked on.
    if (!check_points_.empty() && (s.model != check_model_ || s.gpu != check_gpu_)) check_points_.clear();
    if (!check_points_.empty()) {
        if (!measured) measured = MeasuredOverlay{};
        measured->points.insert(measured->points.end(), check_points_.begin(), check_points_.end());
        if (calibration_label.isEmpty()) calibration_label = tr("checked benchmark result");
    }
    // The profile control names the fitted profile's band for this engine's bf16 decode steps.
    if (engine_catalog_) {
        const std::string engine_name = s.engine.section(QLatin1Char('@'), 0, 0).toStdString();
        const std::optional<engine::Band> band = engine::find_band(engine_catalog_->bands, engine_name, "bf16", engine::FigureClass::Step);
        const auto percent = [](double x) { return (x >= 0 ? QStringLiteral("+") : QString()) + QString::number(100 * x, 'f', 0) + QLatin1Char('%'); };
        controls_->setEngineProfileBand(band ? tr("step %1 to %2").arg(percent(band->p10), percent(band->p90)) : QString());
    }
    crossover_->setResult(*result_, sweep_, measured ? &*measured : nullptr, calibration_label);
    checkpoint_->setResult(*result_, scan_);
    memory_->setResult(*result_);
    decision_->setResult(*result_);
    // The capacity panel sizes the same setup with every step priced by the engine profile.
    try {
        PlannerSetup engine_setup = s;
        engine_setup.profile = QStringLiteral("engine");
        engine_setup.calibration.clear();
        capacity_->setRequest(plan_request(engine_setup, resolvedModel(s.model), resolvedGpu(s.gpu), nullptr,
                                           engine_catalog_ ? &*engine_catalog_ : nullptr, &spec_data_),
                              gpu_prices_);
    } catch (const std::exception& e) {
        capacity_->status()->setText(tr("Capacity planning needs the engine profiles: %1").arg(QString::fromUtf8(e.what())));
    }
    startWhatIf(result_->request);
    updateTitle();
    last_replan_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    statusBar()->showMessage(tr("Replanned in %1 ms").arg(last_replan_ms_, 0, 'f', 1), 4000);
}

void MainWindow::startWhatIf(const PlanRequest& request) {
    memory_->setWhatIfStatus(tr("Pricing every KV-cache dtype…"));
    what_if_job_->start<KvWhatIf>(
        tr("KV what-if"), [request](JobContext& context) { return kv_what_if(request, context); },
        [this](KvWhatIf w) { memory_->setWhatIf(w); });
}

void MainWindow::updateTitle() {
    if (!result_) {
        setWindowTitle(QStringLiteral("quantplan"));
        return;
    }
    const auto& r = result_->request;
    QString title = tr("%1 on %2 — quantplan").arg(QString::fromStdString(r.model.name), QString::fromStdString(r.gpu.name));
    if (scenario_ && step_ >= 0) title = scenario_->name + QStringLiteral(" — ") + title;
    setWindowTitle(title);
}

void MainWindow::showError(const QString& message) {
    banner_->setText(message);
    banner_->show();
    statusBar()->showMessage(message, 8000);
}

void MainWindow::clearError() {
    banner_->clear();
    banner_->hide();
}

QString MainWindow::errorText() const { return banner_->isVisible() || !banner_->text().isEmpty() ? banner_->text() : QString(); }

QList<Panel*> MainWindow::panels() const { return {crossover_, error_, checkpoint_, memory_, decision_, capacity_}; }

Panel* MainWindow::currentPanel() const { return qobject_cast<Panel*>(tabs_->currentWidget()); }

void MainWindow::cancelJobs() {
    what_if_job_->cancel();
    checkpoint_job_->cancel();
    error_->job()->cancel();
    error_->tensorJob()->cancel();
    capacity_->job()->cancel();
}

// --- Files ------------------------------------------------------------------------------------

QString MainWindow::chooseOpenFile(const QString& title, const QString& filters) {
    const QString path = QFileDialog::getOpenFileName(this, title, last_directory_, filters);
    if (!path.isEmpty()) last_directory_ = QFileInfo(path).absolutePath();
    return path;
}

QString MainWindow::chooseSaveFile(const QString& title, const QString& suggested, const QString& filters) {
    const QString path = QFileDialog::getSaveFileName(this, title, QDir(last_directory_).filePath(suggested), filters);
    if (!path.isEmpty()) last_directory_ = QFileInfo(path).absolutePath();
    return path;
}

bool MainWindow::openModelPath(const QString& path) {
    try {
        const ModelConfig config = load_model_config(path.toStdString());
        model_cache_[path] = config;
        controls_->addModelEntry(path, QFileInfo(path).isDir() ? QFileInfo(path).fileName() : QFileInfo(path).dir().dirName() + QStringLiteral("/config.json"));
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    replanNow();
    return true;
}

bool MainWindow::openGpuPath(const QString& path) {
    try {
        const GpuProfile gpu = resolve_gpu(path.toStdString(), options_.data.gpus_dir);
        gpu_cache_[path] = gpu;
        controls_->addGpuEntry(path, QString::fromStdString(gpu.id) + QStringLiteral(" (") + QFileInfo(path).fileName() + QStringLiteral(")"));
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    replanNow();
    return true;
}

bool MainWindow::openCalibrationPath(const QString& path) {
    try {
        calibration_cache_.erase(path);  // reread: --validate may have rewritten it
        const Calibration& c = resolvedCalibration(path);
        controls_->setCalibration(path, tr("measured on %1 by %2").arg(QString::fromStdString(c.device.name), QString::fromStdString(c.created_by)),
                                  /*notify=*/false);  // replanned below, at once
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    replanNow();
    return true;
}

bool MainWindow::openCheckPath(const QString& path) {
    try {
        if (!engine_catalog_) throw Error("--check", "no engine profiles were loaded (assets/engines/profiles/)");
        check::CheckInputs in;
        in.models_dir = options_.data.models_dir;
        in.gpus_dir = options_.data.gpus_dir;
        in.gpus = bundled_gpus_;
        in.catalog = &*engine_catalog_;
        const PlannerSetup s = setup();
        last_check_ = run_window_check(path, in, s.gpu.toStdString(), s.model.toStdString());
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    // The measured TPOT of a benchmark result at its concurrency, on the crossover chart.
    check_points_ = check_step_points(*last_check_);
    check_model_ = setup().model;
    check_gpu_ = setup().gpu;
    if (!check_dialog_) check_dialog_ = new CheckDialog(this);
    check_dialog_->showResult(*last_check_, QFileInfo(path).fileName());
    replanNow();  // the crossover chart draws the measured point
    return true;
}

QDialog* MainWindow::checkDialog() const { return check_dialog_; }

void MainWindow::openCheckpointFolder(const QString& path) {
    checkpoint_job_->start<CheckpointScan>(
        tr("Opening %1").arg(QFileInfo(path).fileName()), [path](JobContext& context) { return scan_checkpoint(path, context); },
        [this](CheckpointScan scan) {
            QString model_argument = controls_->setup().model;
            if (scan.config) {
                model_cache_[scan.folder] = *scan.config;
                controls_->addModelEntry(scan.folder, QFileInfo(scan.folder).fileName());
                model_argument = scan.folder;
            }
            // The checkpoint's own scheme joins the comparison, so its bar stands next to the line.
            if (!scan.declared_scheme.isEmpty()) controls_->checkScheme(scan.declared_scheme);
            scan_ = std::move(scan);
            scan_model_ = model_argument;
            replanNow();
            if (!scan_->config_error.isEmpty())
                showError(tr("%1 — its real size is compared with %2.").arg(scan_->config_error, model_argument));
            tabs_->setCurrentWidget(checkpoint_);
        });
}

bool MainWindow::openScenarioFile(const QString& path, int step) {
    try {
        showScenario(load_scenario(path), step);
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    return true;
}

void MainWindow::showScenario(const Scenario& scenario, int step) {
    if (scenario.steps.size() <= 1) {
        closeScenario();
        if (!scenario.steps.empty()) setSetup(scenario.steps.front().setup);
        statusBar()->showMessage(tr("Opened setup \"%1\"").arg(scenario.name), 4000);
        return;
    }
    scenario_ = scenario;
    lecture_bar_->show();
    showStep(std::clamp(step, 0, static_cast<int>(scenario.steps.size()) - 1));
}

void MainWindow::closeScenario() {
    scenario_.reset();
    step_ = -1;
    lecture_bar_->hide();
    lecture_note_->hide();
    next_action_->setEnabled(false);
    previous_action_->setEnabled(false);
    updateTitle();
}

void MainWindow::showStep(int index) {
    if (!scenario_ || index < 0 || index >= static_cast<int>(scenario_->steps.size())) return;
    step_ = index;
    const ScenarioStep& s = scenario_->steps[static_cast<std::size_t>(index)];
    lecture_title_->setText(tr("  %1 — step %2 of %3: <b>%4</b>  ")
                                .arg(scenario_->name.toHtmlEscaped())
                                .arg(index + 1)
                                .arg(scenario_->steps.size())
                                .arg(s.title.toHtmlEscaped()));
    lecture_note_->setText(s.note);
    lecture_note_->setVisible(!s.note.isEmpty());
    previous_action_->setEnabled(index > 0);
    next_action_->setEnabled(index + 1 < static_cast<int>(scenario_->steps.size()));
    for (Panel* p : panels())
        if (!s.panel.isEmpty() && p->exportName() == s.panel) tabs_->setCurrentWidget(p);
    setSetup(s.setup);
}

void MainWindow::nextStep() {
    if (scenario_) showStep(step_ + 1);
}

void MainWindow::previousStep() {
    if (scenario_) showStep(step_ - 1);
}

bool MainWindow::saveSetupFile(const QString& path) {
    try {
        save_scenario(path, setup_scenario(setup(), QFileInfo(path).completeBaseName()));
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    return true;
}

// --- Exports ----------------------------------------------------------------------------------

bool MainWindow::exportChart(Panel* panel, const QString& path) {
    QChart* chart = panel ? panel->chart() : nullptr;
    if (!chart) {
        showError(tr("Nothing to export: this panel has no chart."));
        return false;
    }
    const QSize size(kChartExportWidth, kChartExportHeight);
    const bool svg = path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive);
    const bool ok = svg ? save_chart_svg(chart, path, size) : save_chart_png(chart, path, size);
    if (!ok) {
        showError(tr("Could not write %1").arg(path));
        return false;
    }
    statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
    return true;
}

bool MainWindow::exportTable(ResultTableView* table, const QString& path) {
    if (!table || !table->model()) return false;
    try {
        save_table_csv(*table->model(), path);
    } catch (const std::exception& e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
    return true;
}

void MainWindow::exportChartDialog(Panel* panel) {
    const QString path = chooseSaveFile(tr("Export chart"), panel->exportName() + QStringLiteral(".png"),
                                        tr("PNG image (*.png);;SVG drawing (*.svg)"));
    if (!path.isEmpty()) exportChart(panel, path);
}

void MainWindow::exportTableDialog(ResultTableView* table, const QString& stem) {
    const QString path = chooseSaveFile(tr("Export table"), stem + QStringLiteral(".csv"), tr("CSV table (*.csv)"));
    if (!path.isEmpty()) exportTable(table, path);
}

// --- Presentation and settings ----------------------------------------------------------------

void MainWindow::setPresentationMode(bool on) {
    presentation_ = on;
    if (presentation_action_->isChecked() != on) presentation_action_->setChecked(on);
    const double factor = on ? kPresentationFontScale : 1.0;
    const double chart_factor = on ? kPresentationChartFontScale : 1.0;
    QFont font = QApplication::font();
    if (font.pointSizeF() > 0) font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0) font.setPixelSize(static_cast<int>(font.pixelSize() * factor + 0.5));
    setFont(font);  // propagates to every child widget
    QFont note = font;
    note.setPointSizeF(font.pointSizeF() * 1.15);
    lecture_note_->setFont(note);
    for (Panel* p : panels()) p->setFontScale(chart_factor);
    fitControlsWidth();
}

void MainWindow::fitControlsWidth() {
    controls_->ensurePolished();
    controls_->adjustSize();
    const int scrollbar = controls_scroll_->verticalScrollBar()->sizeHint().width();
    controls_scroll_->setMinimumWidth(controls_->minimumSizeHint().width() + scrollbar + 2 * controls_scroll_->frameWidth());
}

void MainWindow::restoreWindowSettings() {
    restoreGeometry(settings_->value(QLatin1String(kGeometryKey)).toByteArray());
    restoreState(settings_->value(QLatin1String(kStateKey)).toByteArray(), kWindowStateVersion);
    tabs_->setCurrentIndex(std::clamp(settings_->value(QLatin1String(kTabKey), 0).toInt(), 0, tabs_->count() - 1));
    if (settings_->value(QLatin1String(kPresentationKey), false).toBool()) setPresentationMode(true);
}

void MainWindow::saveSettings() {
    settings_->setValue(QLatin1String(kSetupKey), QJsonDocument(setup_to_json(setup())).toJson(QJsonDocument::Compact));
    settings_->setValue(QLatin1String(kGeometryKey), saveGeometry());
    settings_->setValue(QLatin1String(kStateKey), saveState(kWindowStateVersion));
    settings_->setValue(QLatin1String(kTabKey), tabs_->currentIndex());
    settings_->setValue(QLatin1String(kPresentationKey), presentation_);
    settings_->setValue(QLatin1String(kDirectoryKey), last_directory_);
    settings_->sync();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    cancelJobs();
    QMainWindow::closeEvent(event);
}

}  // namespace quantplan::ui

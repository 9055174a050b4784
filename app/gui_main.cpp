// The planner window's entry point. main.cpp has already decided that this run is the GUI (no
// --headless, no report, inspect or validate mode) before anything was built; here the
// QApplication is created, the command line's planner options are laid over the remembered
// setup, and the window opens. Without Qt (QUANTPLAN_HAVE_GUI undefined) the executable is
// headless only and gui_available() says so.
#include "app/commands.h"

#ifdef QUANTPLAN_HAVE_GUI
#include <cstdlib>
#include <exception>
#include <vector>

#include <QtCore/QFileInfo>
#include <QtCore/QSettings>
#include <QtGui/QIcon>
#include <QtWidgets/QApplication>
#include <QtWidgets/QMessageBox>

#include "app/data_paths.h"
#include "core/base/error.h"
#include "ui/window/main_window.h"
#endif

namespace quantplan::app {

#ifndef QUANTPLAN_HAVE_GUI

bool gui_available() { return false; }

int run_gui(int, char**, const CliOptions&) { return 2; }

#else

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Lays every planner option the user gave on the command line over `setup`. An option counts as
// given when it differs from CliOptions' default (an option repeated at its default value leaves
// the remembered setting in place, which is what the user sees either way).
void apply_command_line(const CliOptions& o, ui::PlannerSetup& s) {
    const CliOptions d;
    if (o.model != d.model) s.model = qs(o.model);
    if (o.gpu != d.gpu) s.gpu = qs(o.gpu);
    if (o.schemes) s.schemes = qs(*o.schemes).split(QLatin1Char(','), Qt::SkipEmptyParts);
    if (o.batch != d.batch) s.batch = o.batch;
    if (o.context != d.context) s.context_tokens = o.context;
    if (o.kv != d.kv) s.kv = qs(o.kv);
    if (o.kernel != d.kernel) s.kernel = qs(o.kernel);
    if (o.profile != d.profile) s.profile = qs(o.profile);
    if (o.calibration) s.calibration = QFileInfo(qs(*o.calibration)).absoluteFilePath();
    if (o.gpu_mem_util != d.gpu_mem_util) s.gpu_memory_utilization = o.gpu_mem_util;
    if (o.tp != d.tp) s.tensor_parallel = o.tp;
    if (o.goal != d.goal) s.goal = qs(o.goal);
    if (o.accuracy != d.accuracy) s.accuracy = qs(o.accuracy);
    if (o.reasoning) s.reasoning_heavy = true;
    if (o.enforce_eager) s.enforce_eager = true;
    if (o.mxfp4_mxfp8) s.mxfp4_mxfp8 = true;
    if (o.max_num_batched_tokens != d.max_num_batched_tokens) s.max_num_batched_tokens = o.max_num_batched_tokens;
    if (o.max_num_seqs != d.max_num_seqs) s.max_num_seqs = o.max_num_seqs;
    if (o.errorsim_formats) s.error_lab.weight_formats = qs(*o.errorsim_formats).split(QLatin1Char(','), Qt::SkipEmptyParts);
    if (o.errorsim_methods) {
        const QStringList methods = qs(*o.errorsim_methods).toLower().split(QLatin1Char(','), Qt::SkipEmptyParts);
        s.error_lab.gptq = methods.contains(QStringLiteral("gptq"));
        s.error_lab.awq = methods.contains(QStringLiteral("awq"));
        s.error_lab.smoothquant = methods.contains(QStringLiteral("smoothquant"));
    }
    if (o.errorsim_activation) s.error_lab.activation = qs(*o.errorsim_activation);
    if (o.errorsim_outlier) s.error_lab.outlier_magnitude = *o.errorsim_outlier;
    if (o.errorsim_seed) s.error_lab.seed = *o.errorsim_seed;
}

}  // namespace

bool gui_available() {
#if defined(__linux__)
    // A window needs a display server, or a platform chosen explicitly (QT_QPA_PLATFORM=offscreen
    // in tests). Without one, Qt would abort; the command line runs headless instead.
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) {
        const char* v = std::getenv(name);
        if (v && *v) return true;
    }
    return false;
#else
    return true;
#endif
}

int run_gui(int argc, char** argv, const CliOptions& options) {
    // Qt keeps references to argc and argv for the application's lifetime: program name plus the
    // arguments the option parser left for Qt (-platform, -style, ...).
    static std::vector<std::string> arguments;
    static std::vector<char*> qt_argv;
    static int qt_argc = 0;
    arguments.assign(1, argc > 0 ? argv[0] : "quantplan");
    for (const std::string& a : options.gui_args) arguments.push_back(a);
    qt_argv.clear();
    for (std::string& a : arguments) qt_argv.push_back(a.data());
    qt_argv.push_back(nullptr);
    qt_argc = static_cast<int>(arguments.size());

    QApplication app(qt_argc, qt_argv.data());
    QApplication::setApplicationName(QStringLiteral("quantplan"));
    QApplication::setOrganizationName(QStringLiteral("quantplan"));
    QApplication::setApplicationVersion(QString::fromStdString(version_text()).section(QLatin1Char(' '), -1));
    QApplication::setDesktopFileName(QStringLiteral("quantplan"));
    try {
        ui::WindowOptions window_options;
        try {
            window_options.data.models_dir = models_dir();
            window_options.data.gpus_dir = gpus_dir();
            window_options.data.scenarios_dir = scenarios_dir();
            window_options.data.icon_file = data_dir() / "assets" / "icons" / "quantplan.svg";
            window_options.data.engine_profiles_dir = engine_profiles_dir();
            window_options.data.engine_fit_file = engine_fit_file();
            window_options.data.serving_fit_file = serving_fit_file();
            window_options.data.gpu_prices_file = gpu_prices_file();
            window_options.data.launch_data_dir = data_dir();
            window_options.data.spec_engines_file = spec_engines_file();
            window_options.data.spec_measurements_file = spec_measurements_file();
            window_options.data.spec_fit_file = spec_fit_file();
            window_options.data.interconnects_dir = interconnects_dir();
            window_options.data.kv_transfer_fit_file = kv_transfer_fit_file();
        } catch (const Error& e) {
            QMessageBox::critical(nullptr, QStringLiteral("quantplan"), QString::fromUtf8(e.what()));
            return 1;
        }
        QApplication::setWindowIcon(QIcon(QString::fromStdString(window_options.data.icon_file.string())));

        QSettings settings;
        ui::PlannerSetup setup = ui::remembered_setup(settings);
        apply_command_line(options, setup);
        try {
            ui::validate_setup(setup);
            window_options.initial_setup = setup;
        } catch (const Error& e) {
            // Open on the remembered setup and say what was wrong with the command line.
            window_options.startup_error = QStringLiteral("Command line: ") + QString::fromUtf8(e.what());
        }
        if (options.scenario) {
            // "FILE#N" opens step N (as --scenario does for a report), unless FILE#N itself exists.
            QString spec = QString::fromStdString(*options.scenario);
            const qsizetype hash = spec.lastIndexOf(QLatin1Char('#'));
            bool numbered = false;
            const int step = hash >= 0 ? spec.mid(hash + 1).toInt(&numbered) : 0;
            if (numbered && step >= 1 && !QFileInfo::exists(spec)) {
                window_options.scenario_step = step - 1;
                spec.truncate(hash);
            }
            window_options.scenario_file = spec;
        }

        ui::MainWindow window(window_options);
        window.show();
        return QApplication::exec();
    } catch (const std::exception& e) {
        QMessageBox::critical(nullptr, QStringLiteral("quantplan"), QStringLiteral("Internal error: %1").arg(QString::fromUtf8(e.what())));
        return 2;
    }
}

#endif

}  // namespace quantplan::app

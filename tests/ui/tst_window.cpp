// The planner window, offscreen: it opens on the default model and GPU, its controls drive core's
// plan, every panel's chart series and table cells equal core's predictions, lecture mode walks a
// scenario, setups save and open, charts and tables export, errors land in the window, a
// checkpoint folder opens off the GUI thread, settings are remembered, and a screenshot of every
// panel is left in the build directory (window-screenshots/) to be looked at.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QAreaSeries>
#include <QtWidgets/QDialog>
#include <QtWidgets/QTableWidget>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCore/QDir>
#include <QtCore/QElapsedTimer>
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QTemporaryDir>
#include <QtCore/QFileInfo>
#include <QtGui/QAction>
#include <QtGui/QClipboard>
#include <QtGui/QGuiApplication>
#include <QtGui/QImage>
#include <QtSvg/QSvgRenderer>
#include <QtWidgets/QApplication>
#include <QtWidgets/QCheckBox>
#include <QtWidgets/QComboBox>
#include <QtWidgets/QDoubleSpinBox>
#include <QtWidgets/QLabel>
#include <QtWidgets/QLineEdit>
#include <QtWidgets/QPushButton>
#include <QtWidgets/QListWidget>
#include <QtWidgets/QSpinBox>
#include <QtWidgets/QTabWidget>
#include <QtWidgets/QTextBrowser>
#include <QtWidgets/QToolBar>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/checkpoint/model_config_json.h"
#include "core/checkpoint/safetensors.h"
#include "core/errorsim/errorsim_request.h"
#include "core/plan/sweep.h"
#include "tests/support/synthetic_calibration.h"
#include "ui/charts/charts.h"
#include "ui/window/background_job.h"
#include "ui/window/capacity_panel.h"
#include "ui/window/chart_view.h"
#include "ui/window/checkpoint_panel.h"
#include "ui/window/controls_panel.h"
#include "ui/window/crossover_panel.h"
#include "ui/window/decision_panel.h"
#include "ui/window/error_panel.h"
#include "ui/window/launch_bar.h"
#include "ui/window/log_slider.h"
#include "ui/window/launch_bar.h"
#include "ui/window/main_window.h"
#include "ui/window/memory_panel.h"
#include "ui/window/table_models.h"

using namespace quantplan;
using namespace quantplan::ui;

namespace {

const std::filesystem::path kSource = QUANTPLAN_SOURCE_DIR;

// Values that went through one unit conversion for display (s x 1e3, bytes / 1e9): a few ulps.
constexpr double kConversionRelTol = 1e-12;
// Longest wait for a background job (what-if, error lab, checkpoint scan) before the test fails.
constexpr int kJobTimeoutMs = 60000;
// One frame at 60 Hz: the budget for redrawing the analytic panels after a control change.
constexpr double kFrameBudgetMs = 1000.0 / 60.0;
// The smallest supported screen.
constexpr int kSmallScreenWidth = 1280;
constexpr int kSmallScreenHeight = 800;

bool close(double expected, double actual) {
    return std::fabs(expected - actual) <= kConversionRelTol * std::max(std::fabs(expected), 1e-300);
}

DataPaths source_data() {
    DataPaths d;
    d.models_dir = kSource / "models";
    d.gpus_dir = kSource / "assets" / "gpus";
    d.scenarios_dir = kSource / "assets" / "scenarios";
    d.icon_file = kSource / "assets" / "icons" / "quantplan.svg";
    d.engine_profiles_dir = kSource / "assets" / "engines" / "profiles";
    d.engine_fit_file = kSource / "assets" / "engines" / "fit" / "engine-fit.json";
    d.serving_fit_file = kSource / "assets" / "engines" / "fit" / "serving-fit.json";
    d.gpu_prices_file = kSource / "assets" / "prices" / "gpu-prices.json";
    d.launch_data_dir = kSource;
    d.spec_engines_file = kSource / "assets" / "engines" / "speculative" / "speculative.json";
    d.spec_measurements_file = kSource / "assets" / "measurements" / "speculative" / "speculative-decoding.json";
    d.spec_fit_file = kSource / "assets" / "engines" / "fit" / "spec-fit.json";
    d.interconnects_dir = kSource / "assets" / "interconnects";
    d.kv_transfer_fit_file = kSource / "assets" / "engines" / "fit" / "kv-transfer-fit.json";
    return d;
}

// The bundled engine profiles with their fits, as the window loads them (the default profile is `engine`).
const engine::EngineCatalog& bundled_engines() {
    static const engine::EngineCatalog catalog = [] {
        engine::EngineCatalog c = engine::load_engine_catalog(kSource / "assets" / "engines" / "profiles", kSource / "assets" / "engines" / "fit" / "engine-fit.json");
        const std::filesystem::path serving = kSource / "assets" / "engines" / "fit" / "serving-fit.json";
        engine::apply_serving_fit(c, engine::parse_serving_fit(read_text_file(serving, "serving fit"), serving.string()));
        return c;
    }();
    return catalog;
}

PlanResult core_plan(const PlannerSetup& s) {
    return plan(plan_request(s, resolve_model(s.model.toStdString(), kSource / "models"), resolve_gpu(s.gpu.toStdString(), kSource / "assets" / "gpus"), nullptr,
                             &bundled_engines()));
}

// Runs the event loop until `job` is idle (or the timeout passes).
bool wait_for(BackgroundJob* job) {
    QElapsedTimer t;
    t.start();
    while (job->isRunning() && t.elapsed() < kJobTimeoutMs) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents();
    return !job->isRunning();
}

// Lets the window's zero-delay replan timer fire.
void settle() {
    for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
}

std::filesystem::path screenshot_dir() {
    const std::filesystem::path dir = std::filesystem::current_path() / "window-screenshots";
    std::filesystem::create_directories(dir);
    return dir;
}

// A window on the bundled data with its own settings file.
struct WindowFixture {
    WindowFixture() : window(options(default_setup())) {
        window.resize(kSmallScreenWidth, kSmallScreenHeight);
        window.show();
        settle();
    }
    WindowOptions options(std::optional<PlannerSetup> initial) {
        WindowOptions o;
        o.data = source_data();
        o.settings_file = dir.filePath(QStringLiteral("settings.ini"));
        o.initial_setup = std::move(initial);
        return o;
    }
    // Shows `model` on `gpu` with one scheme at tensor parallel `tp`, after the replan.
    void show_one_scheme(const char* model, const char* gpu, const char* scheme, std::int64_t tp) {
        PlannerSetup setup = window.setup();
        setup.model = QString::fromLatin1(model);
        setup.gpu = QString::fromLatin1(gpu);
        setup.schemes = {QString::fromLatin1(scheme)};
        setup.tensor_parallel = tp;
        window.setSetup(setup);
        settle();
    }
    QTemporaryDir dir;
    MainWindow window;
};

template <class Series>
Series* series_named(QChart* chart, const QString& name) {
    auto* s = qobject_cast<Series*>(find_series(chart, name));
    BOOST_TEST_INFO("series " << name.toStdString());
    BOOST_REQUIRE(s != nullptr);
    return s;
}

// The labels of the legend entries a chart shows.
std::vector<std::string> visible_legend_labels(QChart* chart) {
    std::vector<std::string> out;
    for (QLegendMarker* m : chart->legend()->markers())
        if (m->isVisible()) out.push_back(m->label().toStdString());
    return out;
}

QBarSet* bar_set_named(QChart* chart, const QString& label) {
    for (QAbstractSeries* s : chart->series())
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(s))
            for (QBarSet* set : bars->barSets())
                if (set->label() == label) return set;
    BOOST_TEST_INFO("bar set " << label.toStdString());
    BOOST_REQUIRE(false);
    return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(window)

BOOST_FIXTURE_TEST_CASE(opens_on_the_default_model_and_gpu_with_the_six_schemes, WindowFixture) {
    BOOST_REQUIRE(window.result().has_value());
    BOOST_TEST(window.errorText().isEmpty(), window.errorText().toStdString());
    BOOST_TEST(window.result()->request.model.name == "qwen3-8b");
    BOOST_TEST(window.result()->request.gpu.id == "h100-sxm");
    BOOST_TEST(window.result()->schemes.size() == 6u);
    BOOST_TEST(window.controls()->modelBox()->currentData().toString().toStdString() == "qwen3-8b");
    BOOST_TEST(window.controls()->gpuBox()->currentData().toString().toStdString() == "h100-sxm");
    BOOST_TEST(window.windowTitle().contains(QStringLiteral("qwen3-8b")));
    BOOST_TEST(window.tabs()->count() == 6);
    // Every panel lays out at the smallest screen.
    BOOST_TEST(window.minimumSizeHint().width() <= kSmallScreenWidth);
    BOOST_TEST(window.minimumSizeHint().height() <= kSmallScreenHeight);
}

BOOST_FIXTURE_TEST_CASE(crossover_chart_series_equal_core_sweep_after_driving_the_controls, WindowFixture) {
    // Drive the controls as a user would: typed batch and context.
    window.controls()->batchSlider()->spinBox()->setValue(1024);
    window.controls()->contextSlider()->spinBox()->setValue(128);
    settle();
    const PlannerSetup s = window.setup();
    BOOST_TEST(s.batch == 1024);
    BOOST_TEST(s.context_tokens == 128);
    const PlanResult expected = core_plan(s);
    const std::vector<SweepPoint> sweep = batch_sweep(expected, crossover_sweep_batches(expected));
    BOOST_REQUIRE(window.sweep().size() == sweep.size());
    for (std::size_t i = 0; i < sweep.size(); ++i) {
        BOOST_TEST(window.sweep()[i].scheme == sweep[i].scheme);
        BOOST_TEST(window.sweep()[i].batch == sweep[i].batch);
        BOOST_TEST(window.sweep()[i].time_s == sweep[i].time_s);
    }
    QChart* chart = window.crossoverPanel()->chart();
    for (const SchemeResult& r : expected.schemes) {
        const std::string name = scheme_name(r.costs.scheme);
        auto* line = series_named<QLineSeries>(chart, QString::fromStdString(name));
        std::vector<const SweepPoint*> admitted;
        for (const SweepPoint& p : sweep)
            if (p.scheme == name && p.admitted) admitted.push_back(&p);
        BOOST_TEST_CONTEXT("scheme " << name) {
            BOOST_REQUIRE(line->count() == static_cast<int>(admitted.size()));
            for (int i = 0; i < line->count(); ++i) {
                BOOST_TEST(line->at(i).x() == static_cast<double>(admitted[static_cast<std::size_t>(i)]->batch));
                BOOST_TEST(close(admitted[static_cast<std::size_t>(i)]->time_s * 1e3, line->at(i).y()),
                           "batch " << line->at(i).x() << ": expected " << admitted[static_cast<std::size_t>(i)]->time_s * 1e3 << " ms, got " << line->at(i).y());
            }
        }
    }
    BOOST_TEST(find_series(chart, QStringLiteral("batch 1024")) != nullptr);
    // The chart was updated in place (sync_chart): its legend shows what a fresh chart's shows.
    for (const std::int64_t batch : {64, 2048}) {
        window.controls()->batchSlider()->spinBox()->setValue(static_cast<int>(batch));
        settle();
        QChartView fresh_view;
        fresh_view.setChart(make_crossover_chart(*window.result(), window.sweep()));
        fresh_view.resize(800, 600);
        fresh_view.show();
        settle();
        BOOST_TEST(visible_legend_labels(window.crossoverPanel()->chart()) == visible_legend_labels(fresh_view.chart()), "batch " << batch);
    }
    window.controls()->batchSlider()->spinBox()->setValue(1024);
    settle();
    // The tokens/s metric draws core's throughput.
    window.crossoverPanel()->setMetricTokensPerS(true);
    chart = window.crossoverPanel()->chart();
    auto* bf16 = series_named<QLineSeries>(chart, QStringLiteral("bf16"));
    const SweepPoint* first = nullptr;
    for (const SweepPoint& p : sweep)
        if (p.scheme == "bf16" && p.admitted) {
            first = &p;
            break;
        }
    BOOST_REQUIRE(first != nullptr);
    BOOST_TEST(close(first->throughput_tokens_per_s, bf16->at(0).y()));
    // The hover readout shows each scheme's exact values and bound at the batch under the cursor.
    const QString readout = window.crossoverPanel()->readoutAt(1024);
    BOOST_TEST(readout.contains(QStringLiteral("batch 1024")), readout.toStdString());
    for (const SchemeResult& r : expected.schemes) {
        const SweepPoint* p = nearest_sweep_point(sweep, scheme_name(r.costs.scheme), 1024);
        BOOST_REQUIRE(p != nullptr);
        BOOST_TEST(readout.contains(QString::fromUtf8(bound_name(p->bound)) + QStringLiteral("-bound")));
    }
    // The table shows the schemes at the workload, as core priced them.
    for (int row = 0; row < window.crossoverPanel()->model()->rowCount(); ++row)
        BOOST_TEST(window.crossoverPanel()->model()->index(row, 2).data(kExportRole).toDouble() ==
                   expected.schemes[static_cast<std::size_t>(row)].decode.time_s * 1e3);
}

BOOST_FIXTURE_TEST_CASE(checkpoint_and_memory_panels_follow_core_and_the_kv_control, WindowFixture) {
    const PlanResult expected = core_plan(window.setup());
    QChart* chart = window.checkpointPanel()->chart();
    QBarSet* payload = bar_set_named(chart, QStringLiteral("payload"));
    QBarSet* metadata = bar_set_named(chart, QStringLiteral("metadata"));
    BOOST_REQUIRE(payload->count() == static_cast<int>(expected.schemes.size()));
    for (std::size_t i = 0; i < expected.schemes.size(); ++i) {
        const CheckpointBudget& b = expected.schemes[i].costs.budget;
        BOOST_TEST(close(static_cast<double>(b.quantized_payload_bytes) / 1e9, payload->at(static_cast<int>(i))));
        BOOST_TEST(close(static_cast<double>(b.metadata_bytes) / 1e9, metadata->at(static_cast<int>(i))));
    }
    // Batch 1,024 at 4,096 tokens, then FP8 KV through the combo box: the seed's third regime.
    window.controls()->batchSlider()->spinBox()->setValue(1024);
    settle();
    const int fp8 = window.controls()->kvBox()->findData(QStringLiteral("fp8"));
    BOOST_REQUIRE(fp8 >= 0);
    window.controls()->kvBox()->setCurrentIndex(fp8);
    settle();
    const PlanResult with_fp8 = core_plan(window.setup());
    BOOST_TEST(kv_format_name(window.result()->request.workload.kv) == "fp8");
    MemoryTableModel* memory = window.memoryPanel()->model();
    for (std::size_t i = 0; i < with_fp8.schemes.size(); ++i) {
        BOOST_TEST(memory->index(static_cast<int>(i), 13).data(kExportRole).toLongLong() == with_fp8.schemes[i].admission.max_sequences);
        BOOST_TEST(memory->index(static_cast<int>(i), 2).data(kExportRole).toDouble() ==
                   static_cast<double>(with_fp8.schemes[i].decode.kv_bytes) / 1073741824.0);
    }
    BOOST_TEST_MESSAGE("bf16 weights, fp8 KV, batch 1024, context 4096: max sequences " << with_fp8.schemes.front().admission.max_sequences
                                                                                         << " (seed 003: 194)");
    // The what-if arrives off the GUI thread and prices every KV format with core's plan.
    BOOST_REQUIRE(wait_for(window.whatIfJob()));
    KvWhatIfModel* what_if = window.memoryPanel()->whatIfModel();
    BOOST_TEST(what_if->rowCount() == static_cast<int>(kv_format_names().size()));
    PlannerSetup bf16_kv = window.setup();
    bf16_kv.kv = QStringLiteral("bf16");
    const PlanResult with_bf16 = core_plan(bf16_kv);
    BOOST_TEST(what_if->index(0, 0).data(Qt::DisplayRole).toString().toStdString() == "bf16");
    BOOST_TEST(what_if->index(0, 2).data(kExportRole).toLongLong() == with_bf16.schemes.front().admission.max_sequences);
}

BOOST_FIXTURE_TEST_CASE(error_panel_draws_core_ladders_and_follows_the_method_toggles, WindowFixture) {
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    const ErrorLadders& ladders = window.errorPanel()->ladders();
    BOOST_REQUIRE(!ladders.ladders.empty());
    errorsim::ErrorLabConfig base;
    base.weights = errorsim::parse_weight_formats("int4", "test").front();
    base.layer.outlier_magnitude = 20;
    const std::vector<errorsim::LadderRow> expected = errorsim::granularity_ladder(base);
    QChart* chart = window.errorPanel()->chart();
    auto* layer = series_named<QLineSeries>(chart, ladders.labels.front() + QStringLiteral(" layer error"));
    auto* weight = series_named<QLineSeries>(chart, ladders.labels.front() + QStringLiteral(" weight error"));
    BOOST_REQUIRE(layer->count() == static_cast<int>(expected.size()));
    for (int i = 0; i < layer->count(); ++i) {
        BOOST_TEST(close(expected[static_cast<std::size_t>(i)].result.layer_error_calibration * 100, layer->at(i).y()));
        BOOST_TEST(close(expected[static_cast<std::size_t>(i)].result.weight_error * 100, weight->at(i).y()));
    }
    // GPTQ on: the panel reruns off the GUI thread and shows core's GPTQ ladder.
    window.errorPanel()->gptqBox()->setChecked(true);
    BOOST_TEST(window.setup().error_lab.gptq);
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    base.methods.gptq = true;
    const std::vector<errorsim::LadderRow> gptq = errorsim::granularity_ladder(base);
    const auto& shown = window.errorPanel()->ladders().ladders.front();
    BOOST_REQUIRE(shown.size() == gptq.size());
    for (std::size_t i = 0; i < gptq.size(); ++i) BOOST_TEST(shown[i].result.layer_error_calibration == gptq[i].result.layer_error_calibration);
    BOOST_TEST_MESSAGE("int4 g128 layer error: rtn " << expected[2].result.layer_error_calibration << ", gptq " << gptq[2].result.layer_error_calibration
                                                     << " (seed 003: 12.76% -> 4.68%)");
    // AWQ and SmoothQuant exclude each other in the controls as in the lab.
    window.errorPanel()->awqBox()->setChecked(true);
    window.errorPanel()->smoothquantBox()->setChecked(true);
    BOOST_TEST(!window.errorPanel()->awqBox()->isChecked());
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    BOOST_TEST(window.errorText().isEmpty(), window.errorText().toStdString());
}

BOOST_FIXTURE_TEST_CASE(error_panel_quantizes_a_real_tensor_off_the_gui_thread, WindowFixture) {
    // A 64 x 256 fp32 weight tensor in a safetensors file, with a deterministic spread of values.
    constexpr std::int64_t kRows = 64, kCols = 256;
    std::string data(static_cast<std::size_t>(kRows * kCols) * sizeof(float), '\0');
    for (std::int64_t i = 0; i < kRows * kCols; ++i) {
        const float v = 0.02f * static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * (1.0 + static_cast<double>(i % kCols) / kCols));
        std::memcpy(data.data() + i * static_cast<std::int64_t>(sizeof(float)), &v, sizeof(float));
    }
    const std::string file = encode_safetensors({{"model.layers.0.mlp.down_proj.weight", SafetensorsDtype::F32, {kRows, kCols}, data}});
    const QString path = dir.filePath(QStringLiteral("tensor.safetensors"));
    QFile f(path);
    BOOST_REQUIRE(f.open(QIODevice::WriteOnly));
    f.write(file.data(), static_cast<qint64>(file.size()));
    f.close();
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    window.errorPanel()->gptqBox()->setChecked(true);
    window.errorPanel()->useRealTensor(path, QStringLiteral("model.layers.0.mlp.down_proj.weight"));
    BOOST_REQUIRE(wait_for(window.errorPanel()->tensorJob()));
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    const ErrorLadders& ladders = window.errorPanel()->ladders();
    BOOST_TEST(ladders.layer_source.toStdString() == "model.layers.0.mlp.down_proj.weight");
    // The same ladder computed by core directly on the same tensor.
    errorsim::LayerSpec spec;
    spec.outlier_magnitude = 20;
    const errorsim::Layer layer =
        errorsim::layer_from_weights(errorsim::read_safetensors_tensor(path.toStdString(), "model.layers.0.mlp.down_proj.weight"), spec);
    errorsim::ErrorLabConfig base;
    base.weights = errorsim::parse_weight_formats("int4", "test").front();
    base.methods.gptq = true;
    const std::vector<errorsim::LadderRow> expected = errorsim::granularity_ladder(base, layer);
    BOOST_REQUIRE(ladders.ladders.front().size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        BOOST_TEST(ladders.ladders.front()[i].result.layer_error_calibration == expected[i].result.layer_error_calibration, "row " << i);
    // Back to the synthetic layer.
    window.errorPanel()->useRealTensor({}, {});
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    BOOST_TEST(window.errorPanel()->ladders().layer_source.startsWith(QStringLiteral("synthetic")));
    // A tensor name the file does not hold: the error is shown in the window.
    window.errorPanel()->useRealTensor(path, QStringLiteral("no.such.tensor"));
    BOOST_REQUIRE(wait_for(window.errorPanel()->tensorJob()));
    BOOST_TEST(window.errorText().contains(QStringLiteral("no.such.tensor")), window.errorText().toStdString());
}

BOOST_FIXTURE_TEST_CASE(decision_panel_states_the_recommendation_reasons_and_warnings, WindowFixture) {
    window.controls()->batchSlider()->spinBox()->setValue(1024);
    window.controls()->contextSlider()->spinBox()->setValue(128);
    window.controls()->kernelBox()->setCurrentIndex(window.controls()->kernelBox()->findData(QStringLiteral("generic")));
    settle();
    const PlanResult expected = core_plan(window.setup());
    const QString text = window.decisionPanel()->text()->toPlainText();
    BOOST_TEST(text.contains(QString::fromStdString(expected.decision.recommendation)), text.toStdString());
    BOOST_TEST(text.contains(QString::fromStdString(expected.decision.regime)));
    for (const std::string& r : expected.decision.reasons) BOOST_TEST(text.contains(QString::fromStdString(r)), r);
    for (const std::string& w : expected.decision.warnings) BOOST_TEST(text.contains(QString::fromStdString(w)), w);
    BOOST_TEST(window.decisionPanel()->model()->rowCount() == static_cast<int>(expected.decision.ranking.size()));
    // "Copy launch command": the recommended scheme's command, as --emit prints it, on the clipboard.
    LaunchBar* bar = window.decisionPanel()->launchBar();
    BOOST_TEST(bar->copyButton()->isEnabled());
    const QString command = bar->copyLaunchCommand();
    BOOST_TEST(!command.isEmpty(), window.errorText().toStdString());
    BOOST_TEST(QGuiApplication::clipboard()->text() == command);
    BOOST_TEST(command.contains(QStringLiteral("--max-model-len 128")), command.toStdString());
    // "Save deployment…" into an empty folder: the launch files; a folder of other files is refused.
    QTemporaryDir dir;
    BOOST_TEST(bar->saveDeployment(dir.path()));
    BOOST_TEST(QFileInfo::exists(dir.filePath(QStringLiteral("launch.json"))));
    QTemporaryDir foreign;
    QFile mine(foreign.filePath(QStringLiteral("mine.txt")));
    BOOST_TEST(mine.open(QIODevice::WriteOnly));
    mine.close();
    BOOST_TEST(!bar->saveDeployment(foreign.path()));
    BOOST_TEST(window.errorText().contains(QStringLiteral("not quantplan launch files")), window.errorText().toStdString());
}

// The engine profile: the engine control picks it, the plan is priced by its fitted step model, the
// crossover chart shades each scheme's p10-p90 band, and the decision panel lists the evidence.
BOOST_FIXTURE_TEST_CASE(the_engine_profile_prices_the_plan_with_bands_and_evidence, WindowFixture) {
    QComboBox* engine = window.controls()->engineBox();
    BOOST_TEST_REQUIRE(engine->count() >= 6);  // vllm and sglang newest, then every bundled profile
    BOOST_TEST(engine->findData(QStringLiteral("vllm@0.4.0")) >= 0);
    BOOST_TEST(engine->findData(QStringLiteral("sglang")) >= 0);
    // The fitted profile is the default, with its bands; the guessed `realistic` one has none.
    BOOST_TEST(window.controls()->profileBox()->currentData().toString() == QStringLiteral("engine"));
    BOOST_TEST(find_series(window.crossoverPanel()->chartView()->chart(), QStringLiteral("bf16 (p10-p90)")));
    // The control names the fitted profile with its band: vLLM's bf16 step band from the fit file.
    const std::optional<engine::Band> step_band = engine::find_band(bundled_engines().bands, "vllm", "bf16", engine::FigureClass::Step);
    BOOST_TEST_REQUIRE(step_band.has_value());
    const QString label = window.controls()->profileBox()->currentText();
    BOOST_TEST(label.startsWith(QStringLiteral("engine (fitted, step ")), label.toStdString());
    BOOST_TEST(label.contains(QString::number(100 * step_band->p10, 'f', 0) + QStringLiteral("% to ")), label.toStdString());
    window.controls()->profileBox()->setCurrentIndex(window.controls()->profileBox()->findData(QStringLiteral("realistic")));
    settle();
    BOOST_TEST(!find_series(window.crossoverPanel()->chartView()->chart(), QStringLiteral("bf16 (p10-p90)")));
    BOOST_TEST(!window.result()->request.engine->price_steps);
    engine->setCurrentIndex(engine->findData(QStringLiteral("vllm@0.8.0")));
    window.controls()->profileBox()->setCurrentIndex(window.controls()->profileBox()->findData(QStringLiteral("engine")));
    settle();
    BOOST_TEST_REQUIRE(window.errorText().isEmpty(), window.errorText().toStdString());
    const PlanResult& shown = *window.result();
    BOOST_TEST_REQUIRE(shown.request.engine.has_value());
    BOOST_TEST(shown.request.engine->profile.id == "vllm-v1");
    BOOST_TEST(shown.request.engine->price_steps);
    for (const SchemeResult& r : shown.schemes) BOOST_TEST(r.bands.has_value(), scheme_name(r.costs.scheme));
    QChart* chart = window.crossoverPanel()->chartView()->chart();
    auto* band = qobject_cast<QAreaSeries*>(find_series(chart, QStringLiteral("bf16 (p10-p90)")));
    BOOST_TEST_REQUIRE(band != nullptr);
    // The band's edges at batch 1 are the plan's step time times its band factors.
    const SchemeResult& bf16 = shown.schemes.front();
    BOOST_TEST(std::abs(band->upperSeries()->at(0).y() - bf16.decode.time_s * bf16.bands->step_high_factor * 1e3) < 1e-6 * bf16.decode.time_s * 1e3);
    BOOST_TEST(std::abs(band->lowerSeries()->at(0).y() - bf16.decode.time_s * bf16.bands->step_low_factor * 1e3) < 1e-6 * bf16.decode.time_s * 1e3);
    window.tabs()->setCurrentWidget(window.decisionPanel());
    settle();
    const QString text = window.decisionPanel()->text()->toPlainText();
    BOOST_TEST(text.contains(QStringLiteral("Engine profile and evidence")), text.toStdString());
    BOOST_TEST(text.contains(QStringLiteral("qwen3-8b")));
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "engine-profile.png").string())));
    window.tabs()->setCurrentWidget(window.crossoverPanel());
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "engine-profile-crossover.png").string())));
    // The setup carries the engine, as a scenario step and a saved file do.
    BOOST_TEST(setup_to_json(window.setup()).value(QStringLiteral("engine")).toString() == QStringLiteral("vllm@0.8.0"));
}

// File > Check against a log: a published vLLM startup log checked in a dialog, term by term.
BOOST_FIXTURE_TEST_CASE(a_startup_log_is_checked_in_a_dialog, WindowFixture) {
    window.controls()->gpuBox()->setCurrentIndex(window.controls()->gpuBox()->findData(QStringLiteral("l4")));
    settle();
    const QString log = QString::fromStdString((kSource / "tests" / "data" / "logs" / "vllm-0.11.0-llama-3.1-8b-l4-tp1.log").string());
    BOOST_REQUIRE(window.openCheckPath(log));
    BOOST_TEST_REQUIRE(window.lastCheck().has_value());
    const check::CheckResult& r = *window.lastCheck();
    BOOST_TEST(r.identified.model == "llama-3.1-8b");
    BOOST_TEST(r.identified.gpu == "l4");  // the log names no memory: the window's GPU stands in, and a note says so
    BOOST_TEST_REQUIRE(window.checkDialog() != nullptr);
    BOOST_TEST(window.checkDialog()->isVisible());
    auto* table = window.checkDialog()->findChild<QTableWidget*>(QStringLiteral("checkTable"));
    BOOST_TEST_REQUIRE(table != nullptr);
    BOOST_TEST(table->rowCount() == static_cast<int>(r.rows.size()));
    BOOST_TEST(table->rowCount() >= 4);
    settle();
    BOOST_TEST(window.checkDialog()->grab().toImage().save(QString::fromStdString((screenshot_dir() / "check-dialog.png").string())));
    // A file that is no log: the banner says so and nothing changes.
    BOOST_TEST(!window.openCheckPath(QString::fromStdString((kSource / "README.md").string())));
    BOOST_TEST(window.errorText().contains(QStringLiteral("not a vLLM or SGLang startup log")));
}

BOOST_FIXTURE_TEST_CASE(lecture_mode_walks_the_seed_scenario, WindowFixture) {
    const QString path = QString::fromStdString((kSource / "assets" / "scenarios" / "seed-003-batch-walk.json").string());
    BOOST_REQUIRE(window.openScenarioFile(path));
    const Scenario s = load_scenario(path);
    BOOST_TEST(window.stepIndex() == 0);
    BOOST_TEST(window.lectureBar()->isVisibleTo(&window));
    BOOST_TEST(window.lectureNote()->text() == s.steps[0].note);
    BOOST_TEST((window.setup() == s.steps[0].setup));
    for (int i = 1; i < static_cast<int>(s.steps.size()); ++i) {
        window.nextStep();
        BOOST_TEST(window.stepIndex() == i);
        BOOST_TEST((window.setup() == s.steps[static_cast<std::size_t>(i)].setup), "step " << i);
        BOOST_TEST(window.result()->request.workload.batch == s.steps[static_cast<std::size_t>(i)].setup.batch);
        if (!s.steps[static_cast<std::size_t>(i)].panel.isEmpty())
            BOOST_TEST(qobject_cast<Panel*>(window.tabs()->currentWidget())->exportName() == s.steps[static_cast<std::size_t>(i)].panel);
    }
    window.nextStep();  // past the end: stays
    BOOST_TEST(window.stepIndex() == static_cast<int>(s.steps.size()) - 1);
    window.previousStep();
    BOOST_TEST(window.stepIndex() == static_cast<int>(s.steps.size()) - 2);
    // Opening at a step (the command line's FILE#N), clamped to the walk.
    BOOST_REQUIRE(window.openScenarioFile(path, 3));
    BOOST_TEST(window.stepIndex() == 3);
    BOOST_TEST((window.setup() == s.steps[3].setup));
    BOOST_REQUIRE(window.openScenarioFile(path, 99));
    BOOST_TEST(window.stepIndex() == static_cast<int>(s.steps.size()) - 1);
    window.closeScenario();
    BOOST_TEST(!window.lectureBar()->isVisibleTo(&window));
    // A scenario the window refuses: the banner names the file.
    BOOST_TEST(!window.openScenarioFile(dir.filePath(QStringLiteral("missing.json"))));
    BOOST_TEST(window.errorText().contains(QStringLiteral("missing.json")));
}

BOOST_FIXTURE_TEST_CASE(presentation_mode_scales_widgets_and_charts, WindowFixture) {
    const qreal base = window.font().pointSizeF();
    const qreal title = window.crossoverPanel()->chart()->titleFont().pointSizeF();
    window.setPresentationMode(true);
    BOOST_TEST(window.font().pointSizeF() == base * kPresentationFontScale);
    BOOST_TEST(window.crossoverPanel()->chart()->titleFont().pointSizeF() == title * kPresentationChartFontScale);
    // A replan draws new charts, still large.
    window.controls()->batchSlider()->spinBox()->setValue(64);
    settle();
    BOOST_TEST(window.crossoverPanel()->chart()->titleFont().pointSizeF() == title * kPresentationChartFontScale);
    // Every control still fits its dock.
    BOOST_TEST(window.controls()->width() >= window.controls()->minimumSizeHint().width());
    const QImage shot = window.grab().toImage();
    BOOST_TEST(shot.save(QString::fromStdString((screenshot_dir() / "presentation.png").string())));
    window.setPresentationMode(false);
    BOOST_TEST(window.font().pointSizeF() == base);
    BOOST_TEST(window.crossoverPanel()->chart()->titleFont().pointSizeF() == title);
}

// A calibration file overlays the crossover chart with core's measured steps, makes the measured
// profile usable, travels in a saved setup, and clears again; a broken file goes to the banner.
BOOST_FIXTURE_TEST_CASE(a_calibration_file_overlays_measured_points, WindowFixture) {
    const PlannerSetup s = window.setup();
    const ModelConfig model = resolve_model(s.model.toStdString(), kSource / "models");
    const GpuProfile gpu = resolve_gpu(s.gpu.toStdString(), kSource / "assets" / "gpus");
    const QString path = dir.filePath(QStringLiteral("calibration-h100.json"));
    write_file_atomically(path.toStdString(), calibration_to_json(test::synthetic_calibration(model, gpu, builtin_efficiency_profile("realistic"),
                                                                                                   {{"w4a16_fused", 1.4}})));
    BOOST_TEST(window.crossoverPanel()->measuredPoints().empty());
    BOOST_REQUIRE(window.openCalibrationPath(path));
    BOOST_TEST(window.errorText().isEmpty(), window.errorText().toStdString());
    BOOST_TEST(window.setup().calibration == path);
    const MeasuredOverlay expected = measured_step_points(load_calibration(path.toStdString()), *window.result());
    const std::vector<MeasuredStepPoint>& shown = window.crossoverPanel()->measuredPoints();
    BOOST_TEST_REQUIRE(shown.size() == expected.points.size());
    BOOST_TEST_REQUIRE(!shown.empty());
    for (std::size_t i = 0; i < shown.size(); ++i) BOOST_TEST(shown[i].measured_step_s == expected.points[i].measured_step_s);
    QChart* chart = window.crossoverPanel()->chartView()->chart();
    auto* w4 = series_named<QScatterSeries>(chart, QStringLiteral("w4a16-g128 (measured)"));
    BOOST_TEST(w4->count() > 0);
    BOOST_TEST(window.crossoverPanel()->markersLabel()->text().contains(QStringLiteral("Measured (triangles")));
    BOOST_TEST(window.crossoverPanel()->readoutAt(1.0).contains(QStringLiteral("measured")));
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "crossover-measured-synthetic.png").string())));

    // The measured profile prices the plan from the file.
    window.controls()->profileBox()->setCurrentIndex(window.controls()->profileBox()->findData(QStringLiteral("measured")));
    settle();
    BOOST_TEST(window.errorText().isEmpty(), window.errorText().toStdString());
    BOOST_TEST(window.result()->request.efficiency.name == "measured");

    // A saved setup carries the file.
    const QString saved = dir.filePath(QStringLiteral("with-calibration.json"));
    BOOST_REQUIRE(window.saveSetupFile(saved));
    QFile saved_file(saved);
    BOOST_REQUIRE(saved_file.open(QIODevice::ReadOnly));
    BOOST_TEST(QString::fromUtf8(saved_file.readAll()).contains(QStringLiteral("calibration-h100.json")));

    // Cleared: no points, and the profile falls back to the default, the fitted engine profile.
    window.controls()->setCalibration({}, {});
    settle();
    BOOST_TEST(window.crossoverPanel()->measuredPoints().empty());
    BOOST_TEST(find_series(window.crossoverPanel()->chartView()->chart(), QStringLiteral("w4a16-g128 (measured)")) == nullptr);
    BOOST_TEST(window.result()->request.efficiency.name == "engine");

    // A setup naming a calibration file that is gone (a remembered setup, say): the banner says so,
    // and the plan goes on without it.
    PlannerSetup gone = window.setup();
    gone.calibration = dir.filePath(QStringLiteral("deleted-calibration.json"));
    window.setSetup(gone);
    settle();
    BOOST_TEST(window.errorText().contains(QStringLiteral("planning without it")), window.errorText().toStdString());
    BOOST_TEST(window.setup().calibration.isEmpty());
    BOOST_TEST(window.crossoverPanel()->measuredPoints().empty());
    BOOST_TEST(window.result()->request.efficiency.name == "engine");

    // A file that is not a calibration: one line in the banner, nothing changes.
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    write_file_atomically(bad.toStdString(), "{\"format_version\": 1");
    BOOST_TEST(!window.openCalibrationPath(bad));
    BOOST_TEST(window.errorText().contains(QStringLiteral("calibration")), window.errorText().toStdString());
    BOOST_TEST(window.setup().calibration.isEmpty());
}

BOOST_FIXTURE_TEST_CASE(a_saved_setup_opens_again, WindowFixture) {
    window.controls()->batchSlider()->spinBox()->setValue(300);
    window.controls()->gpuBox()->setCurrentIndex(window.controls()->gpuBox()->findData(QStringLiteral("rtx-4090")));
    settle();
    const PlannerSetup saved = window.setup();
    const QString path = dir.filePath(QStringLiteral("setup.json"));
    BOOST_REQUIRE(window.saveSetupFile(path));
    window.controls()->batchSlider()->spinBox()->setValue(2);
    settle();
    BOOST_REQUIRE(window.openScenarioFile(path));
    BOOST_TEST((window.setup() == saved));
    BOOST_TEST(window.result()->request.gpu.id == "rtx-4090");
    BOOST_TEST(window.stepIndex() == -1);  // one step: applied, not a lecture
}

BOOST_FIXTURE_TEST_CASE(charts_export_as_png_and_svg_and_tables_as_csv, WindowFixture) {
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    for (Panel* panel : window.panels()) {
        BOOST_TEST_CONTEXT("panel " << panel->exportName().toStdString()) {
            if (panel->chartView()) {
                const QString png = dir.filePath(panel->exportName() + QStringLiteral(".png"));
                const QString svg = dir.filePath(panel->exportName() + QStringLiteral(".svg"));
                BOOST_REQUIRE(window.exportChart(panel, png));
                BOOST_REQUIRE(window.exportChart(panel, svg));
                const QImage image(png);
                BOOST_TEST(image.width() >= kChartExportWidth);
                BOOST_TEST(image.height() >= kChartExportHeight);
                QSvgRenderer renderer(svg);
                BOOST_TEST(renderer.isValid());
            }
            for (ResultTableView* table : panel->tables()) {
                const QString csv = dir.filePath(panel->exportName() + QStringLiteral(".csv"));
                BOOST_REQUIRE(window.exportTable(table, csv));
                QFile f(csv);
                BOOST_REQUIRE(f.open(QIODevice::ReadOnly));
                BOOST_TEST(QString::fromUtf8(f.readAll()) == table_csv(*table->model()));
            }
        }
    }
    // A path that cannot be written is reported in the window.
    BOOST_TEST(!window.exportChart(window.crossoverPanel(), QStringLiteral("/nonexistent-dir/x.png")));
    BOOST_TEST(!window.errorText().isEmpty());
}

BOOST_FIXTURE_TEST_CASE(errors_are_shown_in_the_window_and_the_last_plan_stays, WindowFixture) {
    const std::int64_t batch = window.result()->request.workload.batch;
    BOOST_TEST(!window.openModelPath(QStringLiteral("/nonexistent/config.json")));
    BOOST_TEST(!window.errorText().isEmpty());
    BOOST_TEST(window.result().has_value());
    const QString bad_gpu = dir.filePath(QStringLiteral("gpu.json"));
    QFile f(bad_gpu);
    BOOST_REQUIRE(f.open(QIODevice::WriteOnly));
    f.write("{\"id\": \"x\"}");
    f.close();
    BOOST_TEST(!window.openGpuPath(bad_gpu));
    BOOST_TEST(!window.errorText().isEmpty());
    // Unchecking every scheme: the banner says so, the panels keep the last plan.
    QListWidget* list = window.controls()->schemeList();
    for (int i = 0; i < list->count(); ++i) list->item(i)->setCheckState(Qt::Unchecked);
    settle();
    BOOST_TEST(window.errorText().contains(QStringLiteral("select at least one scheme")), window.errorText().toStdString());
    BOOST_TEST(window.result()->request.workload.batch == batch);
    list->item(0)->setCheckState(Qt::Checked);
    settle();
    BOOST_TEST(window.errorText().isEmpty(), window.errorText().toStdString());
    BOOST_TEST(window.result()->schemes.size() == 1u);
    // A typed scheme outside the grammar is refused in the window.
    window.controls()->schemeEntry()->setText(QStringLiteral("w4a16-g0"));
    window.controls()->addTypedScheme();
    BOOST_TEST(!window.errorText().isEmpty());
    window.controls()->schemeEntry()->setText(QStringLiteral("w4a16-g64"));
    window.controls()->addTypedScheme();
    settle();
    BOOST_TEST(window.setup().schemes.contains(QStringLiteral("w4a16-g64")));
    // A model that does not fit anywhere: core's message in the banner.
    window.controls()->modelBox()->setCurrentIndex(window.controls()->modelBox()->findData(QStringLiteral("llama-3.1-70b")));
    window.controls()->gpuBox()->setCurrentIndex(window.controls()->gpuBox()->findData(QStringLiteral("l4")));
    settle();
    BOOST_TEST(window.errorText().contains(QStringLiteral("does not fit")), window.errorText().toStdString());
}

BOOST_FIXTURE_TEST_CASE(a_checkpoint_folder_opens_off_the_gui_thread_with_its_real_size, WindowFixture) {
    QTemporaryDir checkpoint;
    QFile source(QString::fromStdString((kSource / "models" / "qwen3-8b" / "config.json").string()));
    BOOST_REQUIRE(source.open(QIODevice::ReadOnly));
    QJsonObject config = QJsonDocument::fromJson(source.readAll()).object();
    config.insert(QStringLiteral("quantization_config"),
                  QJsonObject{{QStringLiteral("quant_method"), QStringLiteral("awq")}, {QStringLiteral("bits"), 4},
                              {QStringLiteral("group_size"), 64}, {QStringLiteral("zero_point"), true}, {QStringLiteral("version"), QStringLiteral("gemm")}});
    QFile out(checkpoint.filePath(QStringLiteral("config.json")));
    BOOST_REQUIRE(out.open(QIODevice::WriteOnly));
    out.write(QJsonDocument(config).toJson());
    out.close();
    const std::string shard_bytes = encode_safetensors({{"model.norm.weight", SafetensorsDtype::F16, {2048}, {}}});
    QFile shard(checkpoint.filePath(QStringLiteral("model.safetensors")));
    BOOST_REQUIRE(shard.open(QIODevice::WriteOnly));
    shard.write(shard_bytes.data(), static_cast<qint64>(shard_bytes.size()));
    shard.close();
    window.openCheckpointFolder(checkpoint.path());
    BOOST_TEST(window.checkpointJob()->isRunning());
    BOOST_REQUIRE(wait_for(window.checkpointJob()));
    BOOST_REQUIRE(window.checkpointScan().has_value());
    BOOST_TEST(window.checkpointScan()->tensor_bytes() == 4096u);
    BOOST_TEST(window.setup().model == window.checkpointScan()->folder);
    // The declared scheme (AWQ g64, not in the default six) is added and checked.
    BOOST_TEST(window.setup().schemes.contains(QStringLiteral("w4a16-g64")), window.setup().schemes.join(QLatin1Char(',')).toStdString());
    BOOST_TEST(window.result()->schemes.size() == 7u);
    BOOST_TEST(window.result()->request.model.hidden_size == 4096);
    auto* actual = series_named<QLineSeries>(window.checkpointPanel()->chart(), QStringLiteral("actual checkpoint"));
    BOOST_TEST(close(4096 / 1e9, actual->at(0).y()));
    BOOST_TEST(window.checkpointPanel()->summaryLabel()->text().contains(QStringLiteral("1 safetensors files")),
               window.checkpointPanel()->summaryLabel()->text().toStdString());
    BOOST_TEST(window.tabs()->currentWidget() == window.checkpointPanel());
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "checkpoint-opened.png").string())));
    // Another model: the real size belonged to the checkpoint and is dropped.
    window.controls()->modelBox()->setCurrentIndex(window.controls()->modelBox()->findData(QStringLiteral("llama-3.1-8b")));
    settle();
    BOOST_TEST(!window.checkpointScan().has_value());
    BOOST_TEST(find_series(window.checkpointPanel()->chart(), QStringLiteral("actual checkpoint")) == nullptr);
}

BOOST_AUTO_TEST_CASE(settings_are_remembered_between_sessions) {
    QTemporaryDir dir;
    WindowOptions o;
    o.data = source_data();
    o.settings_file = dir.filePath(QStringLiteral("settings.ini"));
    PlannerSetup custom = default_setup();
    custom.batch = 512;
    custom.context_tokens = 2048;
    custom.kv = QStringLiteral("fp8");
    custom.error_lab.outlier_magnitude = 100;
    {
        o.initial_setup = custom;
        MainWindow first(o);
        first.tabs()->setCurrentIndex(3);
        first.close();
    }
    o.initial_setup.reset();
    MainWindow second(o);
    BOOST_TEST((second.setup() == custom));
    BOOST_TEST(second.tabs()->currentIndex() == 3);
    second.close();
}

BOOST_FIXTURE_TEST_CASE(every_control_has_a_tooltip_and_every_shortcut_is_unique, WindowFixture) {
    ControlsPanel* c = window.controls();
    for (QWidget* w : std::initializer_list<QWidget*>{c->modelBox(), c->gpuBox(), c->schemeList(), c->batchSlider(), c->contextSlider(), c->kvBox(),
                                                      c->kernelBox(), c->profileBox(), c->memoryUtilizationBox(), c->tensorParallelBox(),
                                                      c->goalBox(), c->accuracyBox(), window.errorPanel()->gptqBox(), window.errorPanel()->awqBox(),
                                                      window.errorPanel()->smoothquantBox(), window.errorPanel()->outlierBox(),
                                                      window.errorPanel()->activationBox()})
        BOOST_TEST(!w->toolTip().isEmpty(), w->objectName().toStdString() << " " << w->metaObject()->className());
    std::set<QString> seen;
    int shortcuts = 0;
    for (QAction* a : window.findChildren<QAction*>()) {
        for (const QKeySequence& k : a->shortcuts()) {
            BOOST_TEST(seen.insert(k.toString()).second, "shortcut " << k.toString().toStdString() << " used twice");
            ++shortcuts;
        }
    }
    BOOST_TEST(shortcuts >= 15);
    // Ctrl+4 shows the memory panel.
    for (QAction* a : window.findChildren<QAction*>())
        if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_4)) a->trigger();
    BOOST_TEST(window.tabs()->currentWidget() == window.memoryPanel());
}

// A speed target, not part of ctest (the `ui` entry skips the frame_budget label): a timed check
// fails on a loaded CI machine whatever the code does. bench/README.md says how to run it.
BOOST_FIXTURE_TEST_CASE(a_control_change_redraws_the_analytic_panels_within_a_frame, WindowFixture,
                        *boost::unit_test::label("frame_budget")) {
    // The GUI thread's CPU time from a control change to the end of the repaint it causes (plan,
    // sweep, tables, the visible chart and its painting). Thread CPU time, and the fastest of 41
    // changes, so that other work on a shared build machine (which only ever adds time) does not
    // decide the result; up to kRounds rounds, since a burst of load can cover a whole round. The
    // batch alternates so every change prices a new workload.
    // The error lab's first run (OpenMP on every core) must not share the machine with the timing.
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    BOOST_REQUIRE(wait_for(window.whatIfJob()));
    constexpr int kRounds = 3;
    double fastest = INFINITY;
    int change = 0;  // counts across rounds, so that every change really changes the batch
    for (int round = 0; round < kRounds && !(fastest < kFrameBudgetMs); ++round) {
        std::vector<double> ms;
        for (int i = 0; i < 41; ++i, ++change) {
            const int batch = change % 2 ? 64 : 512;
            BOOST_REQUIRE(window.controls()->batchSlider()->value() != batch);
            timespec start{}, end{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
            window.controls()->batchSlider()->spinBox()->setValue(batch);
            settle();
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
            ms.push_back((end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6);
        }
        std::sort(ms.begin(), ms.end());
        fastest = std::min(fastest, ms.front());
        BOOST_TEST_MESSAGE("round " << round + 1 << ": control change -> replan -> repaint, qwen3-8b, six schemes, GUI-thread CPU: fastest "
                                    << ms.front() << " ms, median " << ms[ms.size() / 2] << " ms, slowest " << ms.back() << " ms (budget "
                                    << kFrameBudgetMs << " ms); last wall-clock replan " << window.lastReplanMs() << " ms");
    }
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
    BOOST_TEST(fastest < kFrameBudgetMs);
#endif
}

namespace {

// A job context for calling a job's work directly on this thread.
class DirectContext : public JobContext {
public:
    bool cancelled() const override { return false; }
    void report(int, const QString&) override {}
};

}  // namespace

// The Capacity panel runs core's capacity planning off the GUI thread (first the traffic as asked,
// then the highest-rate search) and shows what core computes for the same request and inputs.
BOOST_FIXTURE_TEST_CASE(capacity_panel_shows_cores_capacity_plan, WindowFixture) {
    CapacityPanel* panel = window.capacityPanel();
    // Two schemes keep the search short under the sanitizers (each runs 21 simulations of at least
    // 1,000 requests).
    PlannerSetup two = window.setup();
    two.schemes = {QStringLiteral("bf16"), QStringLiteral("w8a8-fp8")};
    window.setSetup(two);
    settle();
    CapacityInputs in;
    in.rate_per_s = 3;
    in.requests = 400;
    in.input = "1000";
    in.output = "200";
    in.target_rate_per_s = 12;
    panel->setInputs(in);
    window.tabs()->setCurrentWidget(panel);
    settle();
    QElapsedTimer t;
    t.start();
    constexpr int kSearchTimeoutMs = 5 * kJobTimeoutMs;  // a Debug + ASan build runs the search 30-50x slower
    while (!(panel->searched() && !panel->job()->isRunning()) && t.elapsed() < kSearchTimeoutMs) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    BOOST_REQUIRE(panel->searched());
    const serve::CapacityPlan& shown = panel->result();
    // The same request and inputs through core directly.
    PlannerSetup s = window.setup();
    s.profile = QStringLiteral("engine");
    engine::EngineCatalog catalog = engine::load_engine_catalog(kSource / "assets" / "engines" / "profiles",
                                                                kSource / "assets" / "engines" / "fit" / "engine-fit.json");
    const std::filesystem::path serving = kSource / "assets" / "engines" / "fit" / "serving-fit.json";  // the window applies it, as the command line does
    engine::apply_serving_fit(catalog, engine::parse_serving_fit(read_text_file(serving, "serving fit"), serving.string()));
    const PlanRequest request = plan_request(s, resolve_model(s.model.toStdString(), kSource / "models"),
                                             resolve_gpu(s.gpu.toStdString(), kSource / "assets" / "gpus"), nullptr, &catalog);
    DirectContext direct;
    const std::map<std::string, double> prices = {{"h100-sxm", 2.5}};
    const serve::CapacityPlan core = run_capacity(request, panel->inputs(), prices, true, direct);
    BOOST_REQUIRE(shown.schemes.size() == core.schemes.size());
    BOOST_REQUIRE(panel->model()->rowCount() == static_cast<int>(core.schemes.size()));
    for (std::size_t i = 0; i < core.schemes.size(); ++i) {
        BOOST_TEST(shown.schemes[i].name == core.schemes[i].name);
        BOOST_TEST((shown.schemes[i].max_rate == core.schemes[i].max_rate));  // deterministic for the seed
        BOOST_TEST(shown.schemes[i].stats.tpot_s.p99 == core.schemes[i].stats.tpot_s.p99);
        // The table shows core's numbers: TPOT p99 in ms (column 4) and the highest rate (column 10).
        const QModelIndex tpot = panel->model()->index(static_cast<int>(i), 4);
        BOOST_TEST(close(core.schemes[i].stats.tpot_s.p99 * 1e3, panel->model()->data(tpot, kExportRole).toDouble()));
        const QModelIndex rate = panel->model()->index(static_cast<int>(i), 10);
        BOOST_TEST(close(*core.schemes[i].max_rate, panel->model()->data(rate, kExportRole).toDouble()));
        // The serving fit's band of the highest rate (the last column), around core's figure.
        const QString band = panel->model()->data(panel->model()->index(static_cast<int>(i), panel->model()->columnCount() - 1), Qt::DisplayRole).toString();
        const QStringList ends = band.split(QLatin1Char('-'));
        BOOST_TEST_REQUIRE(ends.size() == 2, band.toStdString());
        BOOST_TEST(ends[0].toDouble() < *core.schemes[i].max_rate);
        BOOST_TEST(ends[1].toDouble() > *core.schemes[i].max_rate);
        BOOST_TEST(!shown.schemes[i].sweep.empty());
        BOOST_TEST(!shown.schemes[i].stats.timeline.empty());
    }
    BOOST_TEST(panel->rankingModel()->rowCount() > 0);
    // The ranked configurations' launches: the cheapest one's command on the clipboard.
    const QString command = panel->launchBar()->copyLaunchCommand();
    BOOST_TEST(!command.isEmpty(), window.errorText().toStdString());
    BOOST_TEST(command.contains(QStringLiteral("--tensor-parallel-size ") + QString::number(core.ranked.front().tp)), command.toStdString());
    BOOST_TEST(command.contains(QStringLiteral("--max-model-len 1200")), command.toStdString());
    // The charts: one curve per scheme, the SLO line, and a timeline of the first scheme.
    QChart* chart = panel->chart();
    BOOST_REQUIRE(chart != nullptr);
    BOOST_TEST(find_series(chart, QString::fromStdString(core.schemes[0].name)) != nullptr);
    BOOST_TEST(find_series(chart, QStringLiteral("SLO")) != nullptr);
    BOOST_TEST(find_series(chart, QStringLiteral("highest rate")) != nullptr);
    BOOST_TEST(find_series(panel->timelineView()->chart(), QStringLiteral("batch")) != nullptr);
    for (QTabWidget* tabs : panel->findChildren<QTabWidget*>())
        if (tabs->indexOf(panel->timelineView()->parentWidget()) >= 0) tabs->setCurrentWidget(panel->timelineView()->parentWidget());
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "capacity-timeline.png").string())));
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "capacity-searched.png").string())));
    panel->chartBox()->setCurrentIndex(3);
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "capacity-cost.png").string())));
    // A length distribution as --isl spells it runs; a malformed one is one line naming the control.
    CapacityInputs spread = panel->inputs();
    spread.input = "lognormal:800:0.5";
    spread.mode = CapacityInputs::Mode::Users;
    spread.users = 8;
    panel->setInputs(spread);
    panel->rerun();
    t.restart();
    while (!(panel->searched() && !panel->job()->isRunning()) && t.elapsed() < kSearchTimeoutMs) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    BOOST_TEST(!panel->result().schemes.empty());
    BOOST_TEST(panel->result().schemes[0].stats.ttft_s.p99 > panel->result().schemes[0].stats.ttft_s.p50);
    spread.input = "uniform:9:3";
    panel->setInputs(spread);
    panel->rerun();
    BOOST_REQUIRE(wait_for(panel->job()));
    BOOST_TEST(panel->status()->text().contains("prompt lengths"), panel->status()->text().toStdString());
    spread.input = "1000";
    spread.mode = CapacityInputs::Mode::Rate;
    panel->setInputs(spread);
    // A change of input reruns; Cancel stops it and says so.
    panel->rateBox()->setValue(5);
    panel->rerun();
    BOOST_TEST(panel->job()->isRunning());
    panel->cancelButton()->click();
    BOOST_REQUIRE(wait_for(panel->job()));
    BOOST_TEST(panel->status()->text().contains("Cancelled"));
}

// The Capacity panel's disaggregation section runs core's comparison off the GUI thread and shows
// what core computes for the same request, inputs and layout; "Find cheapest" runs core's search
// and puts the layout it found into the controls.
BOOST_FIXTURE_TEST_CASE(capacity_panel_compares_a_disaggregated_layout, WindowFixture) {
    CapacityPanel* panel = window.capacityPanel();
    PlannerSetup one = window.setup();
    one.schemes = {QStringLiteral("w8a8-fp8")};
    window.setSetup(one);
    settle();
    CapacityInputs in;
    in.rate_per_s = 8;
    in.requests = 200;
    in.input = "4000";
    in.output = "200";
    in.slo_ttft_s = 0;
    in.slo_tpot_s = 0.03;
    in.target_rate_per_s = 0;
    panel->setInputs(in);
    DisaggInputs d;
    d.link = "nvlink4";
    panel->setDisaggInputs(d);
    window.tabs()->setCurrentWidget(panel);
    settle();
    const auto wait = [&] {
        QElapsedTimer t;
        t.start();
        while (panel->disaggJob()->isRunning() && t.elapsed() < 5 * kJobTimeoutMs) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    };
    wait();  // the panel's own capacity run may be going; the section's job is separate
    panel->compareButton()->click();
    wait();
    BOOST_REQUIRE(panel->disaggResult().has_value());
    const serve::DisaggComparison& shown = panel->disaggResult()->comparison;
    // The same through core directly.
    DirectContext direct;
    PlannerSetup s = window.setup();
    s.profile = QStringLiteral("engine");
    engine::EngineCatalog catalog = engine::load_engine_catalog(kSource / "assets" / "engines" / "profiles",
                                                                kSource / "assets" / "engines" / "fit" / "engine-fit.json");
    const std::filesystem::path serving = kSource / "assets" / "engines" / "fit" / "serving-fit.json";
    engine::apply_serving_fit(catalog, engine::parse_serving_fit(read_text_file(serving, "serving fit"), serving.string()));
    const PlanRequest request = plan_request(s, resolve_model(s.model.toStdString(), kSource / "models"),
                                             resolve_gpu(s.gpu.toStdString(), kSource / "assets" / "gpus"), nullptr, &catalog);
    const std::vector<serve::Interconnect> links = serve::load_interconnects(kSource / "assets" / "interconnects");
    const DisaggOutcome core = run_disagg(request, panel->inputs(), panel->disaggInputs(), links, {}, {}, direct);
    BOOST_TEST(shown.stats.end_to_end.ttft_s.p99 == core.comparison.stats.end_to_end.ttft_s.p99);
    BOOST_TEST(shown.spec.link.id == "nvlink4");
    BOOST_TEST(shown.connector.id == "nixl");  // vLLM's default
    BOOST_TEST(panel->disaggStatus()->text().contains(QStringLiteral("Winner:")), panel->disaggStatus()->text().toStdString());
    BOOST_TEST(panel->disaggStatus()->text().contains(QStringLiteral("Transfer (nixl): at the line rate")), panel->disaggStatus()->text().toStdString());
    // The chart's bars are core's figures: the disaggregated layout's TPOT p50 (the third bar) in ms.
    QBarSet* dis = bar_set_named(panel->disaggView()->chart(), QStringLiteral("disaggregated (2 GPUs)"));
    BOOST_TEST(dis->at(2) == shown.stats.end_to_end.tpot_s.p50 * 1e3, boost::test_tools::tolerance(1e-9));
    bar_set_named(panel->disaggView()->chart(), QStringLiteral("aggregated (2 x TP 1)"));
    for (QTabWidget* tabs : panel->findChildren<QTabWidget*>())
        if (tabs->indexOf(panel->disaggView()->parentWidget()) >= 0) tabs->setCurrentWidget(panel->disaggView()->parentWidget());
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "capacity-disagg.png").string())));
    // Each scheme's highest rate is no traffic to compare layouts at: one line naming the control.
    CapacityInputs highest = in;
    highest.mode = CapacityInputs::Mode::HighestRate;
    BOOST_CHECK_EXCEPTION(run_disagg(request, highest, panel->disaggInputs(), links, {}, {}, direct), quantplan::Error,
                          [](const quantplan::Error& e) { return std::string(e.what()).find("arrivals") == 0; });
    // vLLM's MooncakeConnector: the window applies the bundled transfer fit as the command line does
    // (its cost a transfer and share of the line rate lengthen every send), and says so.
    DisaggInputs mooncake = panel->disaggInputs();
    mooncake.connector = "mooncake";
    panel->setDisaggInputs(mooncake);
    panel->compareButton()->click();
    wait();
    BOOST_REQUIRE(panel->disaggResult().has_value());
    const auto fit = serve::load_transfer_fit(kSource / "assets" / "engines" / "fit" / "kv-transfer-fit.json");
    const DisaggOutcome with_fit = run_disagg(request, panel->inputs(), mooncake, links, {}, fit, direct);
    BOOST_TEST(panel->disaggResult()->comparison.connector.transfer.points == 9);
    BOOST_TEST(panel->disaggResult()->comparison.stats.transfer_s.p50 == with_fit.comparison.stats.transfer_s.p50);
    BOOST_TEST(with_fit.comparison.stats.transfer_s.p50 > core.comparison.stats.transfer_s.p50);
    BOOST_TEST(panel->disaggStatus()->text().contains(QStringLiteral("Transfer (mooncake): 0.39 ms a transfer, 73% of the line rate, fitted to 9")),
               panel->disaggStatus()->text().toStdString());
    // Fewer links than GPU pairs (a node whose GPUs share NICs): the window passes its count to
    // core, as --interconnect-links does. Decode TP 2 here: one link halves the pair's bandwidth.
    DisaggInputs one_link = mooncake;
    one_link.prefill_tp = 2;
    one_link.decode_tp = 2;
    const DisaggOutcome two_links = run_disagg(request, panel->inputs(), one_link, links, {}, fit, direct);
    one_link.links = 1;
    const DisaggOutcome single = run_disagg(request, panel->inputs(), one_link, links, {}, fit, direct);
    BOOST_TEST(single.comparison.stats.transfer_s.p50 > two_links.comparison.stats.transfer_s.p50);
    BOOST_TEST(disagg_json(single.comparison).at("interconnect").at("links") == 1);
    BOOST_TEST(disagg_json(two_links.comparison).at("interconnect").at("links") == 2);
    panel->setDisaggInputs(one_link);
    BOOST_TEST(panel->disaggInputs().links == 1);
    panel->setDisaggInputs(d);
    BOOST_TEST(panel->disaggInputs().links == 0);
    // Find cheapest: core's search, its layout put into the controls.
    panel->findButton()->click();
    wait();
    BOOST_REQUIRE(panel->disaggResult().has_value());
    BOOST_REQUIRE(panel->disaggResult()->search.has_value());
    const serve::DisaggSearch& found = *panel->disaggResult()->search;
    BOOST_REQUIRE(found.prefill.has_value());
    BOOST_TEST(panel->disaggInputs().prefill_instances == found.prefill_instances);
    BOOST_TEST(panel->disaggInputs().decode_tp == found.decode->tp);
    BOOST_TEST(panel->disaggInputs().decode_scheme == scheme_name(found.decode->scheme));
    BOOST_TEST(panel->disaggResult()->comparison.stats.end_to_end.overloaded == false);
}

BOOST_FIXTURE_TEST_CASE(screenshots_of_every_panel, WindowFixture) {
    // The seed's compute-bound operating point shows the ranking inverted; settle every job first.
    window.controls()->batchSlider()->spinBox()->setValue(1024);
    window.controls()->contextSlider()->spinBox()->setValue(128);
    settle();
    BOOST_REQUIRE(wait_for(window.errorPanel()->job()));
    BOOST_REQUIRE(wait_for(window.whatIfJob()));
    const std::filesystem::path out = screenshot_dir();
    for (int i = 0; i < window.tabs()->count(); ++i) {
        window.tabs()->setCurrentIndex(i);
        settle();
        auto* panel = qobject_cast<Panel*>(window.tabs()->widget(i));
        const QImage shot = window.grab().toImage();
        BOOST_TEST(!shot.isNull());
        BOOST_TEST(shot.width() / shot.devicePixelRatio() == kSmallScreenWidth);
        const std::filesystem::path file = out / (panel->exportName().toStdString() + ".png");
        BOOST_TEST(shot.save(QString::fromStdString(file.string())), file);
        BOOST_TEST_MESSAGE("screenshot " << file);
    }
    window.tabs()->setCurrentIndex(0);
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((out / "window.png").string())));
}

// The modern architectures in the window: DeepSeek-V3 (MLA, FP8 as shipped, on eight H200s) and
// gpt-oss-120b (sliding-window layers, MXFP4 experts) are priced with `native` added to the
// default schemes; Gemma 3 27B and 12B (sliding layers, a vision tower; the 12B on an RTX 4090), zephyr-7b-beta (Mistral's
// window on every layer), Nemotron-H 56B (Mamba2 state)
// Llama 4 Scout (chunked attention, a shared expert), Qwen3-Next (gated DeltaNet state) and
// Qwen3.5-27B (a float32 DeltaNet state, a Qwen3-VL vision tower) with the default ones; the memory panel and the crossover chart draw them.
BOOST_FIXTURE_TEST_CASE(modern_architectures_are_priced_in_the_window, WindowFixture) {
    struct Case {
        const char* model;
        const char* gpu;
        std::int64_t tp;
        bool declares_quantization;  // `native` joins the default schemes
        const char* layout;          // the memory panel's cache split
    };
    for (const Case& c : {Case{"deepseek-v3", "h200", 8, true, "61 mla_latent"}, Case{"gpt-oss-120b", "h100-sxm", 1, true, "18 sliding_attention (window 128)"},
                          Case{"gemma-3-27b-it", "h100-sxm", 1, false, "52 sliding_attention (window 1024)"},
                          Case{"gemma-3-12b-it", "rtx-4090", 1, false, "40 sliding_attention (window 1024)"},
                          Case{"zephyr-7b-beta", "rtx-4090", 1, false, "32 sliding_attention (window 4096)"},
                          Case{"nemotron-h-56b-base-8k", "h200", 1, false, "54 mamba_state (438.3 MiB per sequence)"},
                          Case{"llama-4-scout-17b-16e-instruct", "h200", 2, false, "36 chunked_attention (chunk 8192, cached whole)"},
                          Case{"qwen3-next-80b-a3b-thinking", "h200", 1, false, "36 linear_attention_state"},
                          Case{"qwen3.5-27b", "h100-sxm", 1, false, "48 linear_attention_state (146.8 MiB per sequence)"}}) {
        PlannerSetup setup = window.setup();
        setup.model = QString::fromLatin1(c.model);
        setup.gpu = QString::fromLatin1(c.gpu);
        setup.tensor_parallel = c.tp;
        window.setSetup(setup);
        settle();
        BOOST_TEST_REQUIRE(window.errorText().isEmpty(), window.errorText().toStdString());
        const PlanResult& shown = *window.result();
        BOOST_TEST(shown.request.model.name == c.model);
        const auto native = std::find_if(shown.schemes.begin(), shown.schemes.end(), [](const SchemeResult& r) { return r.costs.scheme.native; });
        BOOST_TEST((native != shown.schemes.end()) == c.declares_quantization, c.model);
        if (native != shown.schemes.end()) BOOST_TEST(native->admission.fits, c.model << ": " << native->admission.reason);
        const auto w4 = std::find_if(shown.schemes.begin(), shown.schemes.end(), [](const SchemeResult& r) { return scheme_name(r.costs.scheme) == "w4a16-g128"; });
        BOOST_TEST_REQUIRE((w4 != shown.schemes.end()), c.model);
        BOOST_TEST(w4->admission.fits, c.model << ": " << w4->admission.reason);
        QAbstractItemModel* memory = window.memoryPanel()->tables().front()->model();
        BOOST_TEST(memory->rowCount() >= static_cast<int>(shown.schemes.size()));
        const QString layout = memory->index(0, memory->columnCount() - 1).data().toString();
        BOOST_TEST(layout.contains(QString::fromLatin1(c.layout)), layout.toStdString());
        window.tabs()->setCurrentWidget(window.memoryPanel());
        settle();
        const std::filesystem::path file = screenshot_dir() / (std::string("memory-") + c.model + ".png");
        BOOST_TEST(window.grab().toImage().save(QString::fromStdString(file.string())), file);
    }
}

// Configs bundled only as evidence for the corpus (catalog "priced": false: phi-2, opt-125m) are
// not offered in the model list; the priced ones around them are, with their repository as tooltip.
BOOST_FIXTURE_TEST_CASE(corpus_only_configs_are_not_offered, WindowFixture) {
    QComboBox* models = window.controls()->modelBox();
    std::size_t unpriced = 0;
    for (const BundledModel& b : load_model_catalog(kSource / "models")) {
        if (b.priced) continue;
        ++unpriced;
        BOOST_TEST(models->findData(QString::fromStdString(b.name)) == -1, b.name);
    }
    BOOST_TEST(unpriced == 3u);  // phi-2, opt-125m, llama-3.2-11b-vision
    const int zephyr = models->findData(QStringLiteral("zephyr-7b-beta"));
    BOOST_TEST_REQUIRE(zephyr >= 0);
    BOOST_TEST(models->itemData(zephyr, Qt::ToolTipRole).toString().toStdString() == "HuggingFaceH4/zephyr-7b-beta");
    const int qwen = models->findData(QStringLiteral("qwen3-8b"));
    BOOST_TEST_REQUIRE(qwen >= 0);
    BOOST_TEST(models->itemData(qwen, Qt::ToolTipRole).toString().toStdString() == "Qwen/Qwen3-8B");
}

// DeepSeek-V3 in bf16 over two nodes of eight H200s: expert parallel with two data-parallel
// engines fits it, and the setup keeps the keys a scenario step uses.
BOOST_FIXTURE_TEST_CASE(data_parallel_engines_over_nodes_in_the_window, WindowFixture) {
    show_one_scheme("deepseek-v3", "h200", "bf16", 8);
    BOOST_TEST(window.errorText().contains(QStringLiteral("does not fit")), window.errorText().toStdString());
    window.controls()->expertParallelBox()->setChecked(true);
    window.controls()->dataParallelBox()->setValue(2);
    window.controls()->nodesBox()->setValue(2);
    settle();
    BOOST_TEST_REQUIRE(window.errorText().isEmpty(), window.errorText().toStdString());
    const PlanResult& shown = *window.result();
    BOOST_TEST(shown.request.workload.expert_parallel == 16);
    BOOST_TEST(shown.request.workload.data_parallel == 2);
    BOOST_TEST(shown.request.workload.nodes == 2);
    BOOST_TEST(shown.schemes.front().admission.fits, shown.schemes.front().admission.reason);
    BOOST_TEST(shown.schemes.front().decode.all_to_all_bytes > 0);
    const QJsonObject saved = setup_to_json(window.setup());
    BOOST_TEST(saved.value(QStringLiteral("dp")).toInt() == 2);
    BOOST_TEST(saved.value(QStringLiteral("nodes")).toInt() == 2);
    // One node cannot hold sixteen GPUs: the banner says so in one line.
    window.controls()->nodesBox()->setValue(1);
    settle();
    BOOST_TEST(window.errorText().contains(QStringLiteral("--nodes")), window.errorText().toStdString());
    window.controls()->nodesBox()->setValue(2);
    settle();
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "deepseek-v3-two-nodes.png").string())));
}

// Speculative decoding from the controls: the crossover chart draws each scheme speculating beside
// its plain curve and marks where it stops paying; the setup keeps the keys; a bad acceptance is
// the banner's one line.
BOOST_FIXTURE_TEST_CASE(speculation_in_the_window, WindowFixture) {
    PlannerSetup setup = window.setup();
    setup.model = QStringLiteral("llama-3.1-8b");
    setup.gpu = QStringLiteral("h100-sxm");
    setup.schemes = {QStringLiteral("bf16"), QStringLiteral("w4a16-g128")};
    setup.context_tokens = 512;
    setup.spec = QStringLiteral("eagle3:3");
    window.setSetup(setup);
    settle();
    BOOST_TEST_REQUIRE(window.errorText().isEmpty(), window.errorText().toStdString());
    const PlanResult& shown = *window.result();
    BOOST_REQUIRE(shown.speculation.size() == 2u);
    BOOST_TEST(shown.request.spec->acceptance.source.find("default: llama-3.1-8b eagle3") != std::string::npos);
    QChart* chart = window.crossoverPanel()->chart();
    const auto* spec_curve = series_named<QLineSeries>(chart, QStringLiteral("w4a16-g128 (speculative)"));
    BOOST_TEST(spec_curve->count() == static_cast<int>(shown.speculation[1].points.size()));
    BOOST_TEST(spec_curve->pen().style() == Qt::DashDotLine);
    const auto* stops = series_named<QScatterSeries>(chart, QStringLiteral("speculation stops paying"));
    BOOST_REQUIRE(shown.speculation[1].stops_paying_batch.has_value());
    bool marked = false;
    for (const QPointF& p : stops->points()) marked = marked || p.x() == static_cast<double>(*shown.speculation[1].stops_paying_batch);
    BOOST_TEST(marked);
    BOOST_TEST(setup_to_json(window.setup()).value(QStringLiteral("spec")).toString() == QStringLiteral("eagle3:3"));
    window.tabs()->setCurrentWidget(window.crossoverPanel());
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "speculation-crossover.png").string())));
    setup.spec_acceptance = QStringLiteral("0.9,1.4,0.2");
    window.setSetup(setup);
    settle();
    BOOST_TEST(window.errorText().contains(QStringLiteral("spec_acceptance")), window.errorText().toStdString());
}

// Two RTX 4090s: no peer-to-peer by the GPU profile, so the decision panel warns of the all-reduces
// through host memory; the control says "on" for a platform that has it, and the setup keeps it.
BOOST_FIXTURE_TEST_CASE(geforce_tensor_parallel_peer_to_peer_in_the_window, WindowFixture) {
    show_one_scheme("qwen3-8b", "rtx-4090", "bf16", 2);
    BOOST_TEST_REQUIRE(window.errorText().isEmpty(), window.errorText().toStdString());
    const auto warned = [&] {
        for (const std::string& w : window.result()->decision.warnings)
            if (w.find("no peer-to-peer") != std::string::npos) return true;
        return false;
    };
    BOOST_TEST(window.controls()->peerToPeerBox()->currentData().toString() == QStringLiteral("auto"));
    BOOST_TEST(!window.result()->request.workload.gpu_p2p.has_value());
    BOOST_TEST(warned());
    const double host = window.result()->schemes.front().decode.communication_time_s;
    window.controls()->peerToPeerBox()->setCurrentIndex(window.controls()->peerToPeerBox()->findData(QStringLiteral("on")));
    settle();
    BOOST_TEST(*window.result()->request.workload.gpu_p2p);
    BOOST_TEST(!warned());
    BOOST_TEST(window.result()->schemes.front().decode.communication_time_s < host / 10);
    BOOST_TEST(setup_to_json(window.setup()).value(QStringLiteral("gpu_p2p")).toString() == QStringLiteral("on"));
    BOOST_TEST(window.grab().toImage().save(QString::fromStdString((screenshot_dir() / "rtx4090-tp2-peer-to-peer.png").string())));
}

BOOST_AUTO_TEST_SUITE_END()

#include "ui/window/controls_panel.h"

#include <QtCore/QFileInfo>
#include <QtCore/QSignalBlocker>
#include <QtWidgets/QCheckBox>
#include <QtWidgets/QComboBox>
#include <QtWidgets/QDoubleSpinBox>
#include <QtWidgets/QFormLayout>
#include <QtWidgets/QGroupBox>
#include <QtWidgets/QHBoxLayout>
#include <QtWidgets/QLabel>
#include <QtWidgets/QLineEdit>
#include <QtWidgets/QListWidget>
#include <QtWidgets/QMenu>
#include <QtWidgets/QPushButton>
#include <QtWidgets/QSpinBox>
#include <QtWidgets/QToolButton>
#include <QtWidgets/QVBoxLayout>

#include "core/base/error.h"
#include "core/scheme/scheme.h"
#include "ui/window/glossary.h"
#include "ui/window/log_slider.h"

namespace quantplan::ui {
namespace {

// Selects the entry whose data is `argument`; returns false when there is none.
bool select_data(QComboBox* box, const QString& argument) {
    const int i = box->findData(argument);
    if (i < 0) return false;
    box->setCurrentIndex(i);
    return true;
}

QComboBox* combo_of(const std::vector<std::string>& names, const char* term, QWidget* parent) {
    auto* box = new QComboBox(parent);
    for (const std::string& n : names) box->addItem(QString::fromStdString(n), QString::fromStdString(n));
    box->setToolTip(glossary(term));
    return box;
}

// A label whose tooltip defines the term it names.
QLabel* term_label(const QString& text, const char* term, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    label->setToolTip(glossary(term));
    return label;
}

// Widest the calibration file's name is shown beside its buttons (elided in the middle beyond).
constexpr int kCalibrationLabelWidthPx = 110;

}  // namespace

ControlsPanel::ControlsPanel(const std::vector<BundledModel>& models, const std::vector<GpuProfile>& gpus,
                             const std::vector<std::pair<QString, QString>>& engines, QWidget* parent)
    : QWidget(parent) {
    // Model and GPU.
    model_ = new QComboBox(this);
    // Configs bundled only as evidence for the measurement corpus (an architecture quantplan does
    // not price) are not offered: choosing one could only show the refusal.
    for (const BundledModel& m : models) {
        if (!m.priced) continue;
        model_->addItem(QString::fromStdString(m.name), QString::fromStdString(m.name));
        model_->setItemData(model_->count() - 1, QString::fromStdString(m.hf_repo), Qt::ToolTipRole);
    }
    model_->setToolTip(glossary("model"));
    model_->setObjectName(QStringLiteral("model"));
    open_model_ = new QToolButton(this);
    open_model_->setText(tr("Open…"));
    open_model_->setToolTip(tr("Open a config.json or a checkpoint folder"));
    open_model_->setPopupMode(QToolButton::InstantPopup);
    auto* open_menu = new QMenu(open_model_);
    open_menu->addAction(tr("config.json file…"), this, &ControlsPanel::openModelFileRequested);
    open_menu->addAction(tr("Checkpoint folder…"), this, &ControlsPanel::openCheckpointRequested);
    open_model_->setMenu(open_menu);

    gpu_ = new QComboBox(this);
    for (const GpuProfile& g : gpus) {
        gpu_->addItem(QString::fromStdString(g.id), QString::fromStdString(g.id));
        gpu_->setItemData(gpu_->count() - 1, QString::fromStdString(g.name), Qt::ToolTipRole);
    }
    gpu_->setToolTip(glossary("gpu"));
    gpu_->setObjectName(QStringLiteral("gpu"));
    open_gpu_ = new QToolButton(this);
    open_gpu_->setText(tr("Open…"));
    open_gpu_->setToolTip(tr("Open a GPU profile JSON (format: docs/gpu-profiles.md)"));
    connect(open_gpu_, &QToolButton::clicked, this, &ControlsPanel::openGpuFileRequested);

    auto* hardware = new QGroupBox(tr("Model and GPU"), this);
    auto* hardware_form = new QFormLayout(hardware);
    auto* model_row = new QHBoxLayout;
    model_row->addWidget(model_, 1);
    model_row->addWidget(open_model_);
    hardware_form->addRow(term_label(tr("&Model"), "model", this), model_row);
    qobject_cast<QLabel*>(hardware_form->labelForField(model_row))->setBuddy(model_);
    auto* gpu_row = new QHBoxLayout;
    gpu_row->addWidget(gpu_, 1);
    gpu_row->addWidget(open_gpu_);
    hardware_form->addRow(term_label(tr("&GPU"), "gpu", this), gpu_row);
    qobject_cast<QLabel*>(hardware_form->labelForField(gpu_row))->setBuddy(gpu_);

    // Schemes.
    schemes_ = new QListWidget(this);
    schemes_->setToolTip(glossary("schemes"));
    schemes_->setObjectName(QStringLiteral("schemes"));
    for (const std::string& n : canonical_scheme_names()) ensureScheme(QString::fromStdString(n), false);
    schemes_->setMinimumHeight(schemes_->sizeHintForRow(0) * 6);
    scheme_entry_ = new QLineEdit(this);
    scheme_entry_->setPlaceholderText(tr("add a scheme, e.g. w4a16-g64-asym"));
    scheme_entry_->setToolTip(glossary("schemes"));
    add_scheme_ = new QPushButton(tr("Add"), this);
    connect(add_scheme_, &QPushButton::clicked, this, &ControlsPanel::addTypedScheme);
    connect(scheme_entry_, &QLineEdit::returnPressed, this, &ControlsPanel::addTypedScheme);
    connect(schemes_, &QListWidget::itemChanged, this, [this] { emit changed(); });
    auto* scheme_box = new QGroupBox(tr("Schemes"), this);
    scheme_box->setToolTip(glossary("schemes"));
    auto* scheme_layout = new QVBoxLayout(scheme_box);
    scheme_layout->addWidget(schemes_, 1);
    auto* entry_row = new QHBoxLayout;
    entry_row->addWidget(scheme_entry_, 1);
    entry_row->addWidget(add_scheme_);
    scheme_layout->addLayout(entry_row);

    // Workload.
    batch_ = new LogSlider(kMinBatch, kMaxBatch, this);
    batch_->setToolTip(glossary("batch"));
    batch_->setObjectName(QStringLiteral("batch"));
    context_ = new LogSlider(kMinContextTokens, kMaxContextTokens, this);
    context_->setToolTip(glossary("context"));
    context_->setObjectName(QStringLiteral("context"));
    std::vector<std::string> kv_names{"auto"};
    kv_names.insert(kv_names.end(), kv_format_names().begin(), kv_format_names().end());
    kv_ = combo_of(kv_names, "kv", this);
    kv_->setItemText(0, tr("auto (engine default)"));
    kernel_ = combo_of({"fused", "generic"}, "kernel", this);
    kernel_->setItemText(0, tr("fused (Marlin class)"));
    kernel_->setItemText(1, tr("generic (dequantize, then GEMM)"));
    auto* workload = new QGroupBox(tr("Workload"), this);
    auto* workload_form = new QFormLayout(workload);
    workload_form->addRow(term_label(tr("&Batch (sequences)"), "batch", this), batch_);
    qobject_cast<QLabel*>(workload_form->labelForField(batch_))->setBuddy(batch_->spinBox());
    workload_form->addRow(term_label(tr("&Context (tokens)"), "context", this), context_);
    qobject_cast<QLabel*>(workload_form->labelForField(context_))->setBuddy(context_->spinBox());
    workload_form->addRow(term_label(tr("&KV-cache dtype"), "kv", this), kv_);
    qobject_cast<QLabel*>(workload_form->labelForField(kv_))->setBuddy(kv_);
    workload_form->addRow(term_label(tr("W&eight-only kernel"), "kernel", this), kernel_);
    qobject_cast<QLabel*>(workload_form->labelForField(kernel_))->setBuddy(kernel_);

    // Engine.
    profile_ = combo_of({"engine", "realistic", "ideal", "measured"}, "profile", this);  // the fitted one first: the default
    engine_ = new QComboBox(this);
    engine_->setToolTip(glossary("engine"));
    engine_->setObjectName(QStringLiteral("engine"));
    if (engines.empty()) engine_->addItem(QStringLiteral("vllm"), QStringLiteral("vllm"));
    for (const auto& [label, argument] : engines) {
        engine_->addItem(label, argument);
        engine_->setItemData(engine_->count() - 1, label, Qt::ToolTipRole);
    }
    // Profile titles are long: the box keeps the panel's width and elides, the list shows them whole.
    engine_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    engine_->setMinimumContentsLength(16);
    calibration_ = new QLabel(tr("none"), this);
    calibration_->setToolTip(glossary("calibration"));
    calibration_->setObjectName(QStringLiteral("calibration"));
    open_calibration_ = new QToolButton(this);
    open_calibration_->setText(tr("Open…"));
    open_calibration_->setToolTip(tr("Open a calibration file written by quantplan --validate (docs/kernels.md)"));
    connect(open_calibration_, &QToolButton::clicked, this, &ControlsPanel::openCalibrationRequested);
    clear_calibration_ = new QToolButton(this);
    clear_calibration_->setText(tr("Clear"));
    clear_calibration_->setToolTip(tr("Plan without a calibration file"));
    clear_calibration_->setEnabled(false);
    connect(clear_calibration_, &QToolButton::clicked, this, [this] { setCalibration({}, {}); });
    gpu_mem_util_ = new QDoubleSpinBox(this);
    gpu_mem_util_->setRange(0.05, 1.0);
    gpu_mem_util_->setSingleStep(0.01);
    gpu_mem_util_->setDecimals(2);
    gpu_mem_util_->setKeyboardTracking(false);
    gpu_mem_util_->setToolTip(glossary("gpu_mem_util"));
    tp_ = new QSpinBox(this);
    tp_->setRange(1, 8);
    tp_->setKeyboardTracking(false);
    tp_->setToolTip(glossary("tp"));
    ep_ = new QCheckBox(tr("Expert parallel (MoE)"), this);
    ep_->setToolTip(glossary("ep"));
    dp_ = new QSpinBox(this);
    dp_->setRange(1, 64);
    dp_->setKeyboardTracking(false);
    dp_->setToolTip(glossary("dp"));
    nodes_ = new QSpinBox(this);
    nodes_->setRange(1, 64);
    nodes_->setKeyboardTracking(false);
    nodes_->setToolTip(glossary("nodes"));
    // Peer-to-peer between the TP GPUs: the GPU profile's (none on GeForce cards), or as the platform has it.
    p2p_ = combo_of({"auto", "on", "off"}, "gpu_p2p", this);
    p2p_->setItemText(0, tr("auto (the GPU's)"));
    auto* engine = new QGroupBox(tr("Engine"), this);
    auto* engine_form = new QFormLayout(engine);
    engine_form->addRow(term_label(tr("Efficiency &profile"), "profile", this), profile_);
    engine_form->addRow(term_label(tr("E&ngine"), "engine", this), engine_);
    auto* calibration_row = new QHBoxLayout;
    calibration_row->addWidget(calibration_, 1);
    calibration_row->addWidget(open_calibration_);
    calibration_row->addWidget(clear_calibration_);
    engine_form->addRow(term_label(tr("Calibration"), "calibration", this), calibration_row);
    engine_form->addRow(term_label(tr("gpu_memory_&utilization"), "gpu_mem_util", this), gpu_mem_util_);
    engine_form->addRow(term_label(tr("&Tensor parallel"), "tp", this), tp_);
    engine_form->addRow(QString(), ep_);
    engine_form->addRow(term_label(tr("&Data parallel (engines)"), "dp", this), dp_);
    engine_form->addRow(term_label(tr("N&odes"), "nodes", this), nodes_);
    engine_form->addRow(term_label(tr("GPU &peer-to-peer"), "gpu_p2p", this), p2p_);
    eager_ = new QCheckBox(tr("CUDA graphs off (enforce eager)"), this);
    eager_->setObjectName(QStringLiteral("enforce_eager"));
    eager_->setToolTip(glossary("enforce_eager"));
    engine_form->addRow(eager_);
    mxfp8_ = new QCheckBox(tr("MXFP4 experts with MXFP8 activations"), this);
    mxfp8_->setObjectName(QStringLiteral("mxfp4_mxfp8"));
    mxfp8_->setToolTip(glossary("mxfp4_mxfp8"));
    engine_form->addRow(mxfp8_);
    for (QWidget* w : std::initializer_list<QWidget*>{profile_, engine_, gpu_mem_util_, tp_, dp_, nodes_, p2p_})
        qobject_cast<QLabel*>(engine_form->labelForField(w))->setBuddy(w);
    // Speculative decoding: the planner's and the Capacity panel's (both price this setup).
    spec_method_ = combo_of({"", "eagle3", "eagle", "mtp", "ngram"}, "spec", this);
    spec_method_->setItemText(0, tr("off"));
    spec_k_ = new QSpinBox(this);
    spec_k_->setObjectName(QStringLiteral("spec_k"));
    spec_k_->setRange(1, 16);
    spec_k_->setValue(3);
    spec_k_->setPrefix(tr("K = "));
    spec_k_->setToolTip(glossary("spec"));
    spec_acceptance_ = new QLineEdit(this);
    spec_acceptance_->setObjectName(QStringLiteral("spec_acceptance"));
    spec_acceptance_->setPlaceholderText(tr("published default"));
    spec_acceptance_->setToolTip(glossary("spec_acceptance"));
    auto* spec_row = new QHBoxLayout;
    spec_row->addWidget(spec_method_, 1);
    spec_row->addWidget(spec_k_);
    engine_form->addRow(term_label(tr("&Speculation"), "spec", this), spec_row);
    engine_form->addRow(term_label(tr("Acceptance"), "spec_acceptance", this), spec_acceptance_);

    // Goal.
    goal_ = combo_of({"throughput", "latency"}, "goal", this);
    accuracy_ = combo_of({"strict", "moderate", "loose"}, "accuracy", this);
    reasoning_ = new QCheckBox(tr("Reasoning-heavy traffic"), this);
    reasoning_->setToolTip(glossary("reasoning"));
    auto* goal = new QGroupBox(tr("Goal"), this);
    auto* goal_form = new QFormLayout(goal);
    goal_form->addRow(term_label(tr("Optimise for"), "goal", this), goal_);
    goal_form->addRow(term_label(tr("Accuracy tolerance"), "accuracy", this), accuracy_);
    goal_form->addRow(reasoning_);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(hardware);
    layout->addWidget(workload);
    layout->addWidget(scheme_box, 1);
    layout->addWidget(engine);
    layout->addWidget(goal);

    for (QComboBox* box : {model_, gpu_, kv_, kernel_, profile_, engine_, p2p_, goal_, accuracy_})
        connect(box, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { emit changed(); });
    connect(batch_, &LogSlider::valueChanged, this, [this] { emit changed(); });
    connect(context_, &LogSlider::valueChanged, this, [this] { emit changed(); });
    connect(gpu_mem_util_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this] { emit changed(); });
    connect(tp_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { emit changed(); });
    connect(ep_, &QCheckBox::toggled, this, [this] { emit changed(); });
    connect(dp_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { emit changed(); });
    connect(nodes_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { emit changed(); });
    connect(reasoning_, &QCheckBox::toggled, this, [this] { emit changed(); });
    connect(eager_, &QCheckBox::toggled, this, [this] { emit changed(); });
    connect(spec_method_, &QComboBox::currentIndexChanged, this, [this] {
        spec_k_->setEnabled(!spec_method_->currentData().toString().isEmpty());
        spec_acceptance_->setEnabled(!spec_method_->currentData().toString().isEmpty());
        spec_other_.clear();
        emit changed();
    });
    connect(spec_k_, &QSpinBox::valueChanged, this, [this] { emit changed(); });
    connect(spec_acceptance_, &QLineEdit::editingFinished, this, [this] { emit changed(); });
    connect(mxfp8_, &QCheckBox::toggled, this, [this] { emit changed(); });

    setSetup(default_setup());
}

bool ControlsPanel::ensureScheme(const QString& raw, bool checked) {
    QString canonical;
    try {
        canonical = QString::fromStdString(scheme_name(parse_scheme(raw.trimmed().toStdString())));
    } catch (const Error& e) {
        emit errorMessage(QString::fromUtf8(e.what()));
        return false;
    }
    for (int i = 0; i < schemes_->count(); ++i) {
        QListWidgetItem* item = schemes_->item(i);
        if (item->data(Qt::UserRole).toString() == canonical) {
            item->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
            return true;
        }
    }
    auto* item = new QListWidgetItem(canonical, schemes_);
    item->setData(Qt::UserRole, canonical);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    item->setCheckState(checked ? Qt::Checked : Qt::Unchecked);
    return true;
}

void ControlsPanel::addTypedScheme() {
    const QString text = scheme_entry_->text().trimmed();
    if (text.isEmpty()) return;
    bool added = false;
    {
        const QSignalBlocker block(schemes_);
        added = ensureScheme(text, true);
    }
    if (added) {
        scheme_entry_->clear();
        emit changed();
    }
}

bool ControlsPanel::checkScheme(const QString& name) {
    const QSignalBlocker block(schemes_);
    return ensureScheme(name, true);
}

void ControlsPanel::addModelEntry(const QString& argument, const QString& label) {
    if (model_->findData(argument) < 0) {
        model_->addItem(label, argument);
        model_->setItemData(model_->count() - 1, argument, Qt::ToolTipRole);
    }
    select_data(model_, argument);
}

void ControlsPanel::addGpuEntry(const QString& argument, const QString& label) {
    if (gpu_->findData(argument) < 0) {
        gpu_->addItem(label, argument);
        gpu_->setItemData(gpu_->count() - 1, argument, Qt::ToolTipRole);
    }
    select_data(gpu_, argument);
}

void ControlsPanel::setCalibration(const QString& path, const QString& label, bool notify) {
    hidden_.calibration = path;
    calibration_->setText(path.isEmpty() ? tr("none")
                                         : calibration_->fontMetrics().elidedText(QFileInfo(path).fileName(), Qt::ElideMiddle, kCalibrationLabelWidthPx));
    calibration_->setToolTip(path.isEmpty() ? glossary("calibration") : label + QStringLiteral("\n") + path);
    clear_calibration_->setEnabled(!path.isEmpty());
    if (path.isEmpty() && profile_->currentData().toString() == QStringLiteral("measured")) {
        const QSignalBlocker block(profile_);
        select_data(profile_, QStringLiteral("engine"));
    }
    if (notify) emit changed();
}

void ControlsPanel::setEngineProfileBand(const QString& band) {
    const int i = profile_->findData(QStringLiteral("engine"));
    if (i < 0) return;
    const QString text = band.isEmpty() ? tr("engine (fitted)") : tr("engine (fitted, %1)").arg(band);
    if (profile_->itemText(i) == text) return;
    profile_->setItemText(i, text);
    profile_->setItemData(i, band.isEmpty() ? glossary("profile") : tr("The fitted engine profile; its decode step time is within %1 of the held-out corpus runs (p10 to p90 of predicted / measured - 1).").arg(band), Qt::ToolTipRole);
}

void ControlsPanel::setSetup(const PlannerSetup& s) {
    const QList<QObject*> widgets = {model_, gpu_, schemes_, batch_, context_, kv_, kernel_, profile_, engine_, gpu_mem_util_, tp_, ep_, dp_, nodes_, p2p_, goal_, accuracy_, reasoning_, eager_, mxfp8_, spec_method_, spec_k_, spec_acceptance_};
    std::vector<std::unique_ptr<QSignalBlocker>> blockers;
    for (QObject* w : widgets) blockers.push_back(std::make_unique<QSignalBlocker>(w));
    hidden_ = s;
    calibration_->setText(s.calibration.isEmpty() ? tr("none")
                                                  : calibration_->fontMetrics().elidedText(QFileInfo(s.calibration).fileName(), Qt::ElideMiddle,
                                                                                           kCalibrationLabelWidthPx));
    calibration_->setToolTip(s.calibration.isEmpty() ? glossary("calibration") : s.calibration);
    clear_calibration_->setEnabled(!s.calibration.isEmpty());
    if (!select_data(model_, s.model)) addModelEntry(s.model, s.model);
    if (!select_data(gpu_, s.gpu)) addGpuEntry(s.gpu, s.gpu);
    // The list shows the setup's schemes first, in its order (the plan's order), then the rest.
    QStringList others;
    for (int i = 0; i < schemes_->count(); ++i) others << schemes_->item(i)->data(Qt::UserRole).toString();
    for (const std::string& n : canonical_scheme_names())
        if (!others.contains(QString::fromStdString(n))) others << QString::fromStdString(n);
    schemes_->clear();
    for (const QString& name : s.schemes) ensureScheme(name, true);
    for (const QString& name : others) {
        bool present = false;
        for (int i = 0; i < schemes_->count() && !present; ++i) present = schemes_->item(i)->data(Qt::UserRole).toString() == name;
        if (!present) ensureScheme(name, false);
    }
    batch_->setValueSilently(s.batch);
    context_->setValueSilently(s.context_tokens);
    // Aliases ("fp8_e4m3") select their canonical entry; a name no entry has leaves the box as is
    // (validate_setup refuses it before a setup gets here).
    try {
        select_data(kv_, kv_name_is_auto(s.kv.toStdString()) ? QStringLiteral("auto")
                                                               : QString::fromStdString(kv_format_name(parse_kv_format(s.kv.toStdString()))));
    } catch (const Error&) {
        select_data(kv_, s.kv);
    }
    select_data(kernel_, s.kernel);
    select_data(profile_, s.profile);
    if (!select_data(engine_, s.engine)) {  // a version the list does not name as such ("vllm@0.6.3")
        engine_->addItem(s.engine, s.engine);
        select_data(engine_, s.engine);
    }
    gpu_mem_util_->setValue(s.gpu_memory_utilization);
    tp_->setValue(static_cast<int>(s.tensor_parallel));
    ep_->setChecked(s.expert_parallel);
    dp_->setValue(static_cast<int>(s.data_parallel));
    nodes_->setValue(static_cast<int>(s.nodes));
    select_data(p2p_, s.gpu_p2p);
    select_data(goal_, s.goal);
    select_data(accuracy_, s.accuracy);
    reasoning_->setChecked(s.reasoning_heavy);
    eager_->setChecked(s.enforce_eager);
    mxfp8_->setChecked(s.mxfp4_mxfp8);
    // METHOD:K for the methods the controls offer; anything else (draft:MODEL:K) is kept as given.
    const QString method = s.spec.section(QLatin1Char(':'), 0, 0);
    const int k = s.spec.section(QLatin1Char(':'), 1, 1).toInt();
    const int index = s.spec.count(QLatin1Char(':')) == 1 ? spec_method_->findData(method) : -1;
    spec_method_->setCurrentIndex(s.spec.isEmpty() ? 0 : std::max(index, 0));
    spec_other_ = !s.spec.isEmpty() && index < 0 ? s.spec : QString();
    if (k >= 1) spec_k_->setValue(std::min(k, 16));
    spec_k_->setEnabled(!s.spec.isEmpty());
    spec_acceptance_->setText(s.spec_acceptance);
    spec_acceptance_->setEnabled(!s.spec.isEmpty());
}

PlannerSetup ControlsPanel::setup() const {
    PlannerSetup s = hidden_;
    s.error_lab = ErrorLabSetup{};
    s.model = model_->currentData().toString();
    s.gpu = gpu_->currentData().toString();
    s.schemes.clear();
    for (int i = 0; i < schemes_->count(); ++i)
        if (schemes_->item(i)->checkState() == Qt::Checked) s.schemes << schemes_->item(i)->data(Qt::UserRole).toString();
    s.batch = batch_->value();
    s.context_tokens = context_->value();
    s.kv = kv_->currentData().toString();
    s.kernel = kernel_->currentData().toString();
    s.profile = profile_->currentData().toString();
    s.engine = engine_->currentData().toString();
    s.gpu_memory_utilization = gpu_mem_util_->value();
    s.tensor_parallel = tp_->value();
    s.expert_parallel = ep_->isChecked();
    s.data_parallel = dp_->value();
    s.nodes = nodes_->value();
    s.gpu_p2p = p2p_->currentData().toString();
    s.goal = goal_->currentData().toString();
    s.accuracy = accuracy_->currentData().toString();
    s.reasoning_heavy = reasoning_->isChecked();
    s.enforce_eager = eager_->isChecked();
    s.mxfp4_mxfp8 = mxfp8_->isChecked();
    const QString method = spec_method_->currentData().toString();
    s.spec = !spec_other_.isEmpty() ? spec_other_ : method.isEmpty() ? QString() : method + QLatin1Char(':') + QString::number(spec_k_->value());
    s.spec_acceptance = s.spec.isEmpty() ? QString() : spec_acceptance_->text().trimmed();
    return s;
}

}  // namespace quantplan::ui

#include "ui/window/error_panel.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <QtCore/QFileInfo>
#include <QtCore/QLocale>
#include <QtCore/QSignalBlocker>
#include <QtCharts/QLegend>
#include <QtWidgets/QCheckBox>
#include <QtWidgets/QComboBox>
#include <QtWidgets/QDoubleSpinBox>
#include <QtWidgets/QFileDialog>
#include <QtWidgets/QGroupBox>
#include <QtWidgets/QHBoxLayout>
#include <QtWidgets/QInputDialog>
#include <QtWidgets/QLabel>
#include <QtWidgets/QPushButton>
#include <QtWidgets/QSlider>
#include <QtWidgets/QSplitter>
#include <QtWidgets/QTextBrowser>
#include <QtWidgets/QVBoxLayout>

#include "core/base/error.h"
#include "core/errorsim/errorsim_request.h"
#include "ui/charts/charts.h"
#include "ui/window/background_job.h"
#include "ui/window/chart_view.h"
#include "ui/window/glossary.h"

namespace quantplan::ui {
namespace {

// The weight formats offered as check boxes (names as --errorsim-formats spells them).
struct FormatChoice {
    const char* name;
    const char* label;
};
constexpr FormatChoice kFormats[] = {{"int3", "INT3"}, {"int4", "INT4"}, {"int8", "INT8"}, {"fp8", "FP8 (E4M3)"}};

// The activation formats offered (names as --errorsim-activation spells them).
struct ActivationChoice {
    const char* name;
    const char* label;
};
constexpr ActivationChoice kActivations[] = {
    {"bf16", "16-bit (not quantized)"}, {"int8", "INT8, one scale per token"}, {"fp8", "FP8 E4M3, one scale per token"}};

constexpr double kPercent = 100.0;

QString percent(double fraction) { return QLocale::c().toString(fraction * kPercent, 'f', fraction * kPercent < 1 ? 3 : 2) + QStringLiteral("%"); }

// A real tensor's weights, shared read-only between the panel and its jobs.
using SharedWeights = std::shared_ptr<const errorsim::RealWeights>;

}  // namespace

ErrorLadders run_error_ladders(const ErrorLabSetup& setup, const errorsim::Layer& layer, JobContext& context) {
    errorsim::ErrorLabConfig base;
    base.layer.outlier_magnitude = setup.outlier_magnitude;
    base.layer.seed = static_cast<std::uint64_t>(setup.seed);
    base.activations = errorsim::parse_activation(setup.activation.toStdString(), "errorsim_activation");
    base.methods.gptq = setup.gptq;
    base.methods.awq = setup.awq;
    base.methods.smoothquant = setup.smoothquant;
    const errorsim::Layer l = layer.empty() ? errorsim::generate_layer(base.layer) : layer;
    const std::vector<GroupShape> granularities = errorsim::default_errorsim_request().granularities;
    ErrorLadders out;
    out.layer_source = l.tensor_name().empty()
                           ? QStringLiteral("synthetic layer %1 x %2, %3 outlier channels at %4x")
                                 .arg(l.spec().out_features)
                                 .arg(l.spec().in_features)
                                 .arg(l.spec().outlier_channels)
                                 .arg(setup.outlier_magnitude)
                           : QString::fromStdString(l.tensor_name());
    const int total = static_cast<int>(setup.weight_formats.size() * granularities.size());
    int done = 0;
    for (const QString& format : setup.weight_formats) {
        const std::vector<errorsim::WeightQuantSpec> specs = errorsim::parse_weight_formats(format.toStdString(), "errorsim_formats");
        for (const errorsim::WeightQuantSpec& spec : specs) {
            std::vector<errorsim::LadderRow> ladder;
            for (const GroupShape& g : granularities) {
                context.check_cancelled();
                context.report(total > 0 ? 100 * done / total : 0,
                               QStringLiteral("%1 %2").arg(format, QString::fromStdString(errorsim::granularity_name(g))));
                errorsim::ErrorLabConfig config = base;
                config.weights = spec;
                config.weights.group = g;
                ladder.push_back({errorsim::granularity_name(g), g, errorsim::run_error_lab(config, l)});
                ++done;
            }
            out.labels << QString::fromStdString(errorsim::weight_format_name(spec));
            out.ladders.push_back(std::move(ladder));
        }
    }
    return out;
}

// --- ErrorLadderModel -------------------------------------------------------------------------

ErrorLadderModel::ErrorLadderModel(QObject* parent) : ResultTableModel(parent) { setResult({}); }

void ErrorLadderModel::setResult(const ErrorLadders& ladders) {
    std::vector<Column> columns = {
        {QStringLiteral("format"), QStringLiteral("Weight format of the payload.")},
        {QStringLiteral("granularity"), glossary("granularity")},
        {QStringLiteral("layer error (%)"), glossary("layer_error")},
        {QStringLiteral("layer error held-out (%)"), QStringLiteral("The layer's output error on tokens no method was fitted on.")},
        {QStringLiteral("weight error (%)"), glossary("weight_error")},
        {QStringLiteral("eff. bits"), glossary("effective_bits")},
        {QStringLiteral("usable levels"), glossary("usable_levels")},
        {QStringLiteral("activation levels"), QStringLiteral("Median levels an ordinary activation channel spans (0 for 16-bit activations).")},
        {QStringLiteral("weight spread"), QStringLiteral("max / min over input channels of max|W[:, j]|, before -> after AWQ or SmoothQuant rescaling.")},
    };
    std::vector<std::vector<Cell>> rows;
    for (std::size_t f = 0; f < ladders.ladders.size(); ++f) {
        for (const errorsim::LadderRow& row : ladders.ladders[f]) {
            const errorsim::ErrorLabResult& r = row.result;
            Cell spread = text_cell(QStringLiteral("%1x -> %2x").arg(r.weight_spread_before, 0, 'f', 1).arg(r.weight_spread_after, 0, 'f', 1));
            spread.value = r.weight_spread_after;
            rows.push_back({text_cell(ladders.labels.value(static_cast<qsizetype>(f))), text_cell(QString::fromStdString(row.granularity)),
                            number_cell(r.layer_error_calibration * kPercent, 3), number_cell(r.layer_error_heldout * kPercent, 3),
                            number_cell(r.weight_error * kPercent, 3), number_cell(r.effective_bits, 3),
                            number_cell(r.median_levels_per_group, 1), number_cell(r.median_levels_activation_channel, 1), spread});
        }
    }
    setTable(std::move(columns), std::move(rows));
}

// --- ErrorPanel -------------------------------------------------------------------------------

ErrorPanel::ErrorPanel(QWidget* parent) : Panel(parent) {
    job_ = new BackgroundJob(this);
    tensor_job_ = new BackgroundJob(this);

    auto* formats = new QGroupBox(tr("Weight formats"), this);
    formats->setToolTip(tr("Each checked format runs the granularity ladder: per-tensor, per-channel, g128, g64, g32."));
    auto* formats_layout = new QHBoxLayout(formats);
    for (const FormatChoice& f : kFormats) {
        auto* box = new QCheckBox(QString::fromUtf8(f.label), formats);
        box->setProperty("format", QString::fromUtf8(f.name));
        formats_layout->addWidget(box);
        format_boxes_.push_back(box);
        connect(box, &QCheckBox::toggled, this, [this] {
            rerun();
            emit changed();
        });
    }

    gptq_ = new QCheckBox(tr("GPTQ"), this);
    gptq_->setToolTip(glossary("gptq"));
    awq_ = new QCheckBox(tr("AWQ"), this);
    awq_->setToolTip(glossary("awq") + tr(" Excludes SmoothQuant: both rescale input channels."));
    smoothquant_ = new QCheckBox(tr("SmoothQuant"), this);
    smoothquant_->setToolTip(glossary("smoothquant") + tr(" Excludes AWQ: both rescale input channels."));
    auto* methods = new QGroupBox(tr("Methods"), this);
    auto* methods_layout = new QHBoxLayout(methods);
    methods_layout->addWidget(gptq_);
    methods_layout->addWidget(awq_);
    methods_layout->addWidget(smoothquant_);
    connect(gptq_, &QCheckBox::toggled, this, [this] {
        rerun();
        emit changed();
    });
    connect(awq_, &QCheckBox::toggled, this, [this](bool on) {
        if (on && smoothquant_->isChecked()) {
            const QSignalBlocker block(smoothquant_);
            smoothquant_->setChecked(false);
        }
        rerun();
        emit changed();
    });
    connect(smoothquant_, &QCheckBox::toggled, this, [this](bool on) {
        if (on && awq_->isChecked()) {
            const QSignalBlocker block(awq_);
            awq_->setChecked(false);
        }
        rerun();
        emit changed();
    });

    outlier_slider_ = new QSlider(Qt::Horizontal, this);
    outlier_slider_->setRange(static_cast<int>(kMinOutlierMagnitude), static_cast<int>(kMaxOutlierMagnitude));
    outlier_slider_->setToolTip(glossary("outlier"));
    outlier_ = new QDoubleSpinBox(this);
    outlier_->setRange(kMinOutlierMagnitude, kMaxOutlierMagnitude);
    outlier_->setDecimals(1);
    outlier_->setSuffix(QStringLiteral("x"));
    outlier_->setKeyboardTracking(false);
    outlier_->setToolTip(glossary("outlier"));
    connect(outlier_slider_, &QSlider::valueChanged, this, [this](int v) { outlier_->setValue(v); });
    connect(outlier_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double v) {
        const QSignalBlocker block(outlier_slider_);
        outlier_slider_->setValue(static_cast<int>(std::lround(v)));
        rerun();
        emit changed();
    });
    activation_ = new QComboBox(this);
    for (const ActivationChoice& a : kActivations) activation_->addItem(QString::fromUtf8(a.label), QString::fromUtf8(a.name));
    activation_->setToolTip(glossary("activation_format"));
    connect(activation_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
        rerun();
        emit changed();
    });
    auto* tensor_button = new QPushButton(tr("Real tensor…"), this);
    tensor_button->setToolTip(tr("Quantize one weight tensor of a .safetensors checkpoint instead of the synthetic layer "
                                 "(activations stay synthetic). GPTQ on a large tensor takes a while: it runs in the background."));
    connect(tensor_button, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Choose a safetensors file"), {}, tr("safetensors (*.safetensors)"));
        if (path.isEmpty()) return;
        bool ok = false;
        const QString name = QInputDialog::getText(this, tr("Tensor name"), tr("Tensor (e.g. model.layers.0.mlp.down_proj.weight):"),
                                                   QLineEdit::Normal, {}, &ok);
        if (ok && !name.trimmed().isEmpty()) useRealTensor(path, name.trimmed());
    });
    auto* synthetic_button = new QPushButton(tr("Synthetic layer"), this);
    synthetic_button->setToolTip(tr("Back to seed 003's synthetic 32 x 256 layer."));
    connect(synthetic_button, &QPushButton::clicked, this, [this] { useRealTensor({}, {}); });

    auto* inputs = new QGroupBox(tr("Layer"), this);
    auto* inputs_layout = new QHBoxLayout(inputs);
    auto* outlier_label = new QLabel(tr("&Outliers:"), inputs);
    outlier_label->setBuddy(outlier_);
    outlier_label->setToolTip(glossary("outlier"));
    inputs_layout->addWidget(outlier_label);
    inputs_layout->addWidget(outlier_slider_, 1);
    inputs_layout->addWidget(outlier_);
    auto* activation_label = new QLabel(tr("&Activations:"), inputs);
    activation_label->setBuddy(activation_);
    activation_label->setToolTip(glossary("activation_format"));
    inputs_layout->addWidget(activation_label);
    inputs_layout->addWidget(activation_);
    inputs_layout->addWidget(tensor_button);
    inputs_layout->addWidget(synthetic_button);

    readout_ = new QLabel(this);
    readout_->setObjectName(QStringLiteral("errorReadout"));
    readout_->setWordWrap(true);
    readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_ = new QLabel(this);
    status_->setWordWrap(true);

    view_ = new ChartView(this);
    view_->setObjectName(QStringLiteral("errorChart"));
    view_->setHoverText([this](const QPointF& value) {
        const int row = static_cast<int>(std::lround(value.x()));
        QString text;
        for (std::size_t f = 0; f < ladders_.ladders.size(); ++f) {
            const auto& ladder = ladders_.ladders[f];
            if (row < 0 || row >= static_cast<int>(ladder.size())) continue;
            const errorsim::ErrorLabResult& r = ladder[static_cast<std::size_t>(row)].result;
            if (text.isEmpty()) text = QStringLiteral("<b>%1</b><table cellspacing=4>").arg(QString::fromStdString(ladder[static_cast<std::size_t>(row)].granularity));
            text += QStringLiteral("<tr><td><b>%1</b></td><td>layer %2</td><td>weight %3</td><td>%4 bits</td><td>%5 levels</td></tr>")
                        .arg(ladders_.labels.value(static_cast<qsizetype>(f)), percent(r.layer_error_calibration), percent(r.weight_error))
                        .arg(r.effective_bits, 0, 'f', 3)
                        .arg(r.median_levels_per_group, 0, 'f', 0);
        }
        return text.isEmpty() ? text : text + QStringLiteral("</table>");
    });
    model_ = new ErrorLadderModel(this);
    table_ = new ResultTableView(this);
    table_->setModel(model_);
    table_->setObjectName(QStringLiteral("errorTable"));
    log_ = new QTextBrowser(this);
    log_->setToolTip(tr("The lab's decision log for the selected row: every number in words."));
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
        if (current.isValid()) showRow(current.row());
    });

    auto* controls = new QHBoxLayout;
    controls->addWidget(formats);
    controls->addWidget(methods);
    auto* top = new QWidget(this);
    auto* top_layout = new QVBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    top_layout->addLayout(controls);
    top_layout->addWidget(inputs);
    top_layout->addWidget(view_, 1);
    top_layout->addWidget(readout_);
    top_layout->addWidget(status_);
    auto* bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(table_);
    bottom->addWidget(log_);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(bottom);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(job_, &BackgroundJob::failed, this, [this](const QString& m) {
        status_->setText(tr("The error lab refused this combination: %1").arg(m));
        emit errorMessage(m);
    });
    connect(tensor_job_, &BackgroundJob::failed, this, &ErrorPanel::errorMessage);

    setLabSetup(ErrorLabSetup{});
}

ErrorPanel::~ErrorPanel() {
    job_->cancel();
    tensor_job_->cancel();
}

void ErrorPanel::setLabSetup(const ErrorLabSetup& s) {
    {
        std::vector<std::unique_ptr<QSignalBlocker>> blockers;
        for (QObject* o : std::initializer_list<QObject*>{gptq_, awq_, smoothquant_, outlier_slider_, outlier_, activation_})
            blockers.push_back(std::make_unique<QSignalBlocker>(o));
        for (QCheckBox* box : format_boxes_) {
            blockers.push_back(std::make_unique<QSignalBlocker>(box));
            box->setChecked(s.weight_formats.contains(box->property("format").toString()));
        }
        gptq_->setChecked(s.gptq);
        awq_->setChecked(s.awq);
        smoothquant_->setChecked(s.smoothquant);
        outlier_->setValue(s.outlier_magnitude);
        outlier_slider_->setValue(static_cast<int>(std::lround(s.outlier_magnitude)));
        const int a = activation_->findData(s.activation);
        activation_->setCurrentIndex(a < 0 ? 0 : a);
    }
    // Formats without a check box (e.g. int5 from a scenario) are kept as given.
    extra_formats_.clear();
    for (const QString& f : s.weight_formats) {
        bool shown = false;
        for (QCheckBox* box : format_boxes_) shown = shown || box->property("format").toString() == f;
        if (!shown) extra_formats_ << f;
    }
    seed_ = s.seed;
    rerun();
}

ErrorLabSetup ErrorPanel::labSetup() const {
    ErrorLabSetup s;
    s.weight_formats.clear();
    for (QCheckBox* box : format_boxes_)
        if (box->isChecked()) s.weight_formats << box->property("format").toString();
    s.weight_formats << extra_formats_;
    s.gptq = gptq_->isChecked();
    s.awq = awq_->isChecked();
    s.smoothquant = smoothquant_->isChecked();
    s.outlier_magnitude = outlier_->value();
    s.activation = activation_->currentData().toString();
    s.seed = seed_;
    return s;
}

void ErrorPanel::rerun() {
    const ErrorLabSetup s = labSetup();
    if (has_run_ && s == shown_ && !real_changed_) return;
    shown_ = s;
    has_run_ = true;
    real_changed_ = false;
    if (s.weight_formats.isEmpty()) {
        job_->cancel();
        showLadders({});
        status_->setText(tr("Check at least one weight format."));
        return;
    }
    status_->setText(tr("Running the error lab…"));
    const SharedWeights weights = real_weights_;
    job_->start<ErrorLadders>(
        tr("Error lab"),
        [s, weights](JobContext& context) {
            errorsim::Layer layer;
            if (weights) {
                errorsim::LayerSpec spec;
                spec.outlier_magnitude = s.outlier_magnitude;
                spec.seed = static_cast<std::uint64_t>(s.seed);
                layer = errorsim::layer_from_weights(*weights, spec);
            }
            return run_error_ladders(s, layer, context);
        },
        [this](ErrorLadders ladders) { showLadders(ladders); });
}

void ErrorPanel::useRealTensor(const QString& path, const QString& tensor_name) {
    if (path.isEmpty()) {
        tensor_job_->cancel();
        real_weights_.reset();
        real_changed_ = true;
        rerun();
        return;
    }
    tensor_job_->start<SharedWeights>(
        tr("Reading %1").arg(tensor_name),
        [path, tensor_name](JobContext& context) {
            context.report(0, QStringLiteral("reading %1").arg(tensor_name));
            auto w = std::make_shared<const errorsim::RealWeights>(
                errorsim::read_safetensors_tensor(path.toStdString(), tensor_name.toStdString()));
            context.check_cancelled();
            return SharedWeights(w);
        },
        [this](SharedWeights w) {
            real_weights_ = std::move(w);
            real_changed_ = true;
            rerun();
        });
}

void ErrorPanel::showLadders(const ErrorLadders& ladders) {
    const int row = selected_row_;
    ladders_ = ladders;
    model_->setResult(ladders_);
    chartChanged();
    status_->setText(ladders_.ladders.empty() ? QString() : tr("On the %1. Select a row for its readout and decision log.").arg(ladders_.layer_source));
    if (model_->rowCount() == 0) {
        readout_->clear();
        log_->clear();
        return;
    }
    // Keep the row the user looked at; by default the first format's g128, the seed's reference.
    constexpr int kDefaultRow = 2;
    const int shown = row >= 0 && row < model_->rowCount() ? row : std::min(kDefaultRow, model_->rowCount() - 1);
    table_->setCurrentIndex(model_->index(shown, 0));
    showRow(shown);
}

void ErrorPanel::buildChart() {
    // The legend goes to the right: a format's three lines need their full names.
    if (view_->showChart(make_error_chart(ladders_.ladders, ladders_.labels))) view_->chart()->legend()->setAlignment(Qt::AlignRight);
}

void ErrorPanel::showRow(int row) {
    int index = 0;
    for (std::size_t f = 0; f < ladders_.ladders.size(); ++f) {
        for (const errorsim::LadderRow& r : ladders_.ladders[f]) {
            if (index++ != row) continue;
            selected_row_ = row;
            const errorsim::ErrorLabResult& e = r.result;
            const QString name = ladders_.labels.value(static_cast<qsizetype>(f)) + QLatin1Char(' ') + QString::fromStdString(r.granularity);
            // The two errors side by side, then what the grid looks like: the seed's readouts.
            QString readout = QStringLiteral("<span style=\"font-size:large\"><b>%1</b> &nbsp; layer error <b>%2</b> &nbsp;|&nbsp; weight error <b>%3</b></span>"
                                             "<br>held-out layer error %4 &nbsp;·&nbsp; %5 effective bits &nbsp;·&nbsp; %6 usable levels per group")
                                  .arg(name.toHtmlEscaped(), percent(e.layer_error_calibration), percent(e.weight_error), percent(e.layer_error_heldout))
                                  .arg(e.effective_bits, 0, 'f', 3)
                                  .arg(e.median_levels_per_group, 0, 'f', 0);
            if (e.median_levels_activation_channel > 0)
                readout += QStringLiteral(" &nbsp;·&nbsp; %1 levels per ordinary activation channel").arg(e.median_levels_activation_channel, 0, 'f', 0);
            if (e.weight_spread_after != e.weight_spread_before)
                readout += QStringLiteral(" &nbsp;·&nbsp; weight spread %1x → %2x").arg(e.weight_spread_before, 0, 'f', 1).arg(e.weight_spread_after, 0, 'f', 1);
            readout_->setText(readout);
            QString html = QStringLiteral("<p><b>%1</b></p><ul>").arg(name.toHtmlEscaped());
            for (const std::string& line : e.log) html += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(line).toHtmlEscaped());
            log_->setHtml(html + QStringLiteral("</ul>"));
            return;
        }
    }
}

}  // namespace quantplan::ui

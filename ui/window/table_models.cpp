#include "ui/window/table_models.h"

#include <cmath>

#include <QtCore/QLocale>

#include "core/base/atomic_file.h"
#include "core/scheme/scheme.h"
#include "ui/window/glossary.h"

namespace quantplan::ui {
namespace {

// Display units (STYLE.md rule 12: GB and GiB appear only at the edges).
constexpr double kBytesPerGb = 1e9;
constexpr double kBytesPerGib = 1073741824.0;  // 2^30
constexpr double kMsPerS = 1e3;

double gb(std::uint64_t bytes) { return static_cast<double>(bytes) / kBytesPerGb; }
double gb(double bytes) { return bytes / kBytesPerGb; }
double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / kBytesPerGib; }
double gib(std::int64_t bytes) { return static_cast<double>(bytes) / kBytesPerGib; }

ResultTableModel::Column column(const char* title, const char* term) { return {QString::fromUtf8(title), glossary(term)}; }

QString csv_field(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')) &&
        !text.contains(QLatin1Char('\r')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString csv_value(const QVariant& v) {
    if (v.typeId() == QMetaType::Double) {
        const double d = v.toDouble();
        if (std::isnan(d)) return {};
        return QString::number(d, 'g', 17);
    }
    return v.toString();
}

}  // namespace

// --- ResultTableModel -------------------------------------------------------------------------

int ResultTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ResultTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(columns_.size());
}

QVariant ResultTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Cell& cell = rows_[static_cast<std::size_t>(index.row())][static_cast<std::size_t>(index.column())];
    switch (role) {
        case Qt::DisplayRole: return cell.text;
        case kExportRole: return cell.value;
        case Qt::ToolTipRole:
            return cell.tooltip.isEmpty() ? QVariant() : QVariant(cell.tooltip);
        case Qt::TextAlignmentRole: {
            const int type = cell.value.typeId();
            const bool numeric = type == QMetaType::Double || type == QMetaType::LongLong || type == QMetaType::Int;
            return QVariant::fromValue(numeric ? Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter)
                                               : Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
        }
        default: return {};
    }
}

QVariant ResultTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
    if (section < 0 || section >= static_cast<int>(columns_.size())) return {};
    const Column& c = columns_[static_cast<std::size_t>(section)];
    if (role == Qt::DisplayRole) return c.title;
    if (role == Qt::ToolTipRole) return c.tooltip.isEmpty() ? QVariant() : QVariant(c.tooltip);
    return {};
}

void ResultTableModel::clear() {
    beginResetModel();
    rows_.clear();
    endResetModel();
}

void ResultTableModel::setTable(std::vector<Column> columns, std::vector<std::vector<Cell>> rows) {
    for (const auto& row : rows) Q_ASSERT(row.size() == columns.size());
    beginResetModel();
    columns_ = std::move(columns);
    rows_ = std::move(rows);
    endResetModel();
}

ResultTableModel::Cell ResultTableModel::text_cell(const QString& text, const QString& tooltip) {
    return {QVariant(text), text, tooltip};
}

ResultTableModel::Cell ResultTableModel::integer_cell(std::int64_t value) {
    return {QVariant(static_cast<qlonglong>(value)), QLocale::c().toString(static_cast<qlonglong>(value)), {}};
}

ResultTableModel::Cell ResultTableModel::number_cell(double value, int decimals) {
    if (std::isnan(value)) return {QVariant(value), QStringLiteral("n/a"), QStringLiteral("undefined (for a speedup: bf16 itself does not fit)")};
    if (std::isinf(value)) return {QVariant(value), QStringLiteral("never"), {}};
    QLocale locale = QLocale::c();
    locale.setNumberOptions(QLocale::DefaultNumberOptions);
    return {QVariant(value), locale.toString(value, 'f', decimals), {}};
}

// --- SchemeTableModel -------------------------------------------------------------------------

SchemeTableModel::SchemeTableModel(QObject* parent) : ResultTableModel(parent) { setResult(PlanResult{}); }

void SchemeTableModel::setResult(const PlanResult& plan) {
    std::vector<Column> columns = {
        column("scheme", "schemes"),         column("batch run", "admitted_batch"), column("step (ms)", "step_time"),
        column("bound", "bound"),            column("max seq", "max_sequences"),    column("tokens/s", "tokens_per_s"),
        column("x bf16", "speedup"),         column("TTFT (ms)", "ttft"),          column("eff. bits", "effective_bits"),
        column("checkpoint (GB)", "checkpoint"),
    };
    columns.push_back({QStringLiteral("note"), QStringLiteral("What the engine would do differently, or why the scheme does not fit.")});
    std::vector<std::vector<Cell>> rows;
    for (const SchemeResult& r : plan.schemes) {
        QString note = QString::fromStdString(r.costs.note);
        if (!r.admission.fits) note = QStringLiteral("does not fit: ") + QString::fromStdString(r.admission.reason);
        rows.push_back({
            text_cell(QString::fromStdString(scheme_name(r.costs.scheme))),
            integer_cell(r.decode.batch),
            number_cell(r.decode.time_s * kMsPerS, 3),
            text_cell(QString::fromUtf8(bound_name(r.decode.bound))),
            integer_cell(r.admission.max_sequences),
            number_cell(r.throughput_tokens_per_s, 0),
            number_cell(r.speedup_vs_bf16, 2),
            number_cell(r.prefill.time_s * kMsPerS, 1),
            number_cell(r.costs.budget.effective_bits, 3),
            number_cell(gb(r.costs.budget.checkpoint_bytes), 2),
            text_cell(note, note),
        });
    }
    setTable(std::move(columns), std::move(rows));
}

// --- CheckpointTableModel ---------------------------------------------------------------------

CheckpointTableModel::CheckpointTableModel(QObject* parent) : ResultTableModel(parent) { setResult(PlanResult{}); }

void CheckpointTableModel::setResult(const PlanResult& plan, std::optional<std::uint64_t> actual_tensor_bytes) {
    std::vector<Column> columns = {
        column("scheme", "schemes"),           column("payload (GB)", "payload"), column("metadata (GB)", "metadata"),
        column("unquantized (GB)", "unquantized"), column("checkpoint (GB)", "checkpoint"), column("naive bits/16 (GB)", "naive"),
        column("eff. bits", "effective_bits"), column("x smaller than bf16", "compression"),
    };
    if (actual_tensor_bytes)
        columns.push_back({QStringLiteral("predicted / opened"),
                           QStringLiteral("This scheme's predicted checkpoint bytes / the opened checkpoint's tensor bytes "
                                          "(file sizes minus safetensors headers).")});
    std::vector<std::vector<Cell>> rows;
    for (const SchemeResult& r : plan.schemes) {
        const CheckpointBudget& b = r.costs.budget;
        std::vector<Cell> row = {
            text_cell(QString::fromStdString(scheme_name(r.costs.scheme))),
            number_cell(gb(b.quantized_payload_bytes), 3),
            number_cell(gb(b.metadata_bytes), 3),
            number_cell(gb(b.unquantized_bytes), 3),
            number_cell(gb(b.checkpoint_bytes), 3),
            number_cell(gb(b.naive_bytes), 3),
            number_cell(b.effective_bits, 4),
            number_cell(b.compression_vs_bf16, 2),
        };
        if (actual_tensor_bytes)
            row.push_back(number_cell(*actual_tensor_bytes > 0 ? static_cast<double>(b.checkpoint_bytes) / static_cast<double>(*actual_tensor_bytes)
                                                               : std::nan(""),
                                      4));
        rows.push_back(std::move(row));
    }
    setTable(std::move(columns), std::move(rows));
}

// --- MemoryTableModel -------------------------------------------------------------------------

MemoryTableModel::MemoryTableModel(QObject* parent) : ResultTableModel(parent) { setResult(PlanResult{}); }

// "18 full_attention + 18 sliding_attention (window 128)", each type's bytes per token in the tooltip.
ResultTableModel::Cell MemoryTableModel::cache_cell(const std::vector<CacheLayerType>& types) {
    QString tip;
    for (const CacheLayerType& t : types)
        tip += t.bytes_per_sequence > 0
                   ? QStringLiteral("%1 layers of %2: %3 bytes per sequence per GPU, whatever its length\n").arg(t.layers).arg(QString::fromStdString(t.type)).arg(t.bytes_per_sequence)
                   : QStringLiteral("%1 layers of %2: %3 bytes per token per GPU\n").arg(t.layers).arg(QString::fromStdString(t.type)).arg(t.bytes_per_token);
    return text_cell(QString::fromStdString(cache_layout_text(types)), tip.trimmed());
}

void MemoryTableModel::setResult(const PlanResult& plan) {
    std::vector<Column> columns = {
        column("scheme", "schemes"),
        {QStringLiteral("weights read (GiB/step)"), QStringLiteral("Weight bytes one decode step reads, per GPU.")},
        {QStringLiteral("KV read (GiB/step)"), QStringLiteral("KV-cache bytes one decode step reads: batch x context x KV bytes per token (sliding and chunked layers: their window or chunk), plus each sequence's Mamba state read and written.")},
        {QStringLiteral("activations (GiB/step)"), QStringLiteral("Activation bytes one decode step moves between layers.")},
        {QStringLiteral("usable (GiB)"), QStringLiteral("Memory the runtime reports as total (CUDA totalGlobalMem).")},
        {QStringLiteral("engine (GiB)"), glossary("gpu_mem_util")},
        {QStringLiteral("resident weights (GiB)"), QStringLiteral("The checkpoint's bytes held in GPU memory, per GPU.")},
        {QStringLiteral("activation workspace (GiB)"), QStringLiteral("Peak activations of one max_num_batched_tokens forward pass.")},
        {QStringLiteral("sampler (GiB)"), QStringLiteral("fp32 logits for max_num_seqs sequences.")},
        {QStringLiteral("overhead (GiB)"), QStringLiteral("CUDA context, cuBLAS workspaces and graphs (estimate).")},
        column("KV budget (GiB)", "kv_budget"),
        column("KV bytes/token", "kv_bytes_per_token"),
        {QStringLiteral("KV tokens"), QStringLiteral("Tokens the KV budget holds (vLLM: \"GPU KV cache size: N tokens\").")},
        column("max seq", "max_sequences"),
        {QStringLiteral("fits"), QStringLiteral("Whether the weights and at least one sequence fit; otherwise why not.")},
        {QStringLiteral("cache by layer type"),
         QStringLiteral("What each kind of attention layer keeps: every token (full attention), at most its window (sliding "
                        "attention), or one MLA latent per token; KV bytes per token per GPU for each.")},
    };
    std::vector<std::vector<Cell>> rows;
    for (const SchemeResult& r : plan.schemes) {
        const Admission& a = r.admission;
        const DecodeStep& d = r.decode;
        rows.push_back({
            text_cell(QString::fromStdString(scheme_name(r.costs.scheme))),
            number_cell(gib(d.weight_bytes), 3),
            number_cell(gib(d.kv_bytes), 3),
            number_cell(gib(d.activation_bytes), 4),
            number_cell(gib(a.usable_memory_bytes), 2),
            number_cell(gib(a.engine_memory_bytes), 2),
            number_cell(gib(a.weight_bytes), 2),
            number_cell(gib(a.activation_workspace_bytes), 3),
            number_cell(gib(a.sampler_workspace_bytes), 3),
            number_cell(gib(a.runtime_overhead_bytes), 3),
            number_cell(gib(a.budget_bytes), 2),
            integer_cell(static_cast<std::int64_t>(a.kv_bytes_per_token)),
            integer_cell(a.kv_cache_tokens),
            integer_cell(a.max_sequences),
            a.fits ? text_cell(QStringLiteral("yes")) : text_cell(QStringLiteral("no"), QString::fromStdString(a.reason)),
            cache_cell(cache_by_layer_type(r.costs, a.kv_bytes_per_token, a.state_bytes_per_sequence)),
        });
    }
    setTable(std::move(columns), std::move(rows));
}

// --- KvWhatIfModel ----------------------------------------------------------------------------

KvWhatIfModel::KvWhatIfModel(QObject* parent) : ResultTableModel(parent) { setResult(KvWhatIf{}); }

void KvWhatIfModel::setResult(const KvWhatIf& w) {
    std::vector<Column> columns = {column("KV dtype", "kv"), column("KV bytes/token", "kv_bytes_per_token")};
    for (const std::string& s : w.schemes) {
        const QString name = QString::fromStdString(s);
        columns.push_back({name + QStringLiteral(" max seq"), glossary("max_sequences")});
        columns.push_back({name + QStringLiteral(" tokens/s"), glossary("tokens_per_s")});
    }
    std::vector<std::vector<Cell>> rows;
    for (const KvWhatIfRow& r : w.rows) {
        const bool current = r.kv == w.current_kv;
        std::vector<Cell> row = {text_cell(QString::fromStdString(r.kv) + (current ? QStringLiteral(" (current)") : QString()),
                                           current ? QStringLiteral("the KV dtype selected now") : QString()),
                                 integer_cell(static_cast<std::int64_t>(r.kv_bytes_per_token))};
        for (std::size_t i = 0; i < w.schemes.size(); ++i) {
            if (!r.error.empty() || i >= r.max_sequences.size()) {
                row.push_back(text_cell(QStringLiteral("does not fit"), QString::fromStdString(r.error)));
                row.push_back(text_cell(QStringLiteral("-"), QString::fromStdString(r.error)));
            } else {
                row.push_back(integer_cell(r.max_sequences[i]));
                row.push_back(number_cell(r.throughput_tokens_per_s[i], 0));
            }
        }
        rows.push_back(std::move(row));
    }
    setTable(std::move(columns), std::move(rows));
}

// --- RankingModel -----------------------------------------------------------------------------

RankingModel::RankingModel(QObject* parent) : ResultTableModel(parent) { setResult(Decision{}, Goal::Throughput); }

void RankingModel::setResult(const Decision& decision, Goal goal) {
    const bool latency = goal == Goal::Latency;
    std::vector<Column> columns = {
        {QStringLiteral("rank"), QStringLiteral("Place in the ranking by the goal, before the accuracy veto.")},
        column("scheme", "schemes"),
        latency ? column("step (ms)", "step_time") : column("tokens/s", "tokens_per_s"),
        column("vetoed", "veto"),
        {QStringLiteral("reasons"), QStringLiteral("Why the scheme stands where it does, in words.")},
    };
    std::vector<std::vector<Cell>> rows;
    std::int64_t rank = 1;
    for (const RankedScheme& r : decision.ranking) {
        QStringList reasons;
        for (const std::string& reason : r.reasons) reasons << QString::fromStdString(reason);
        const QString joined = reasons.join(QStringLiteral("; "));
        rows.push_back({integer_cell(rank++), text_cell(QString::fromStdString(r.scheme)),
                        latency ? number_cell(r.value * kMsPerS, 3) : number_cell(r.value, 0),
                        text_cell(r.vetoed ? QStringLiteral("yes") : QStringLiteral("no")), text_cell(joined, joined)});
    }
    setTable(std::move(columns), std::move(rows));
}

// --- CSV --------------------------------------------------------------------------------------

QString table_csv(const QAbstractItemModel& model) {
    QString out;
    const int columns = model.columnCount();
    QStringList header;
    for (int c = 0; c < columns; ++c) header << csv_field(model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
    out += header.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    for (int r = 0; r < model.rowCount(); ++r) {
        QStringList fields;
        for (int c = 0; c < columns; ++c) {
            const QModelIndex index = model.index(r, c);
            QVariant v = model.data(index, kExportRole);
            if (!v.isValid()) v = model.data(index, Qt::DisplayRole);
            fields << csv_field(csv_value(v));
        }
        out += fields.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    }
    return out;
}

void save_table_csv(const QAbstractItemModel& model, const QString& path) {
    const QByteArray text = table_csv(model).toUtf8();
    write_file_atomically(path.toStdString(), std::string_view(text.constData(), static_cast<std::size_t>(text.size())));
}

}  // namespace quantplan::ui

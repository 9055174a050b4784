#pragma once
// The window's tables as item models. Each is fed a core result (setResult) and only formats it:
// nothing here computes a byte, a time or an admission. Every cell also carries its unrounded
// value under kExportRole, which the CSV export writes.
#include <optional>
#include <vector>

#include <QtCore/QAbstractTableModel>
#include <QtCore/QString>
#include <QtCore/QVariant>

#include "core/plan/plan.h"
#include "core/roofline/decision.h"
#include "ui/window/kv_what_if.h"

namespace quantplan::ui {

// The role holding a cell's full-precision value (a double, an integer or a string).
inline constexpr int kExportRole = Qt::UserRole + 1;

// A read-only table of formatted cells with header tooltips; the base of every model below.
class ResultTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // One column: its header (with unit) and the tooltip defining it.
    struct Column {
        QString title;
        QString tooltip;
    };
    // One cell: the unrounded value, its text, and an optional tooltip of its own.
    struct Cell {
        QVariant value;
        QString text;
        QString tooltip;
    };

    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Removes every row (columns stay).
    void clear();

protected:
    // Replaces columns and rows in one reset; every row must have one cell per column.
    void setTable(std::vector<Column> columns, std::vector<std::vector<Cell>> rows);

    static Cell text_cell(const QString& text, const QString& tooltip = {});
    static Cell integer_cell(std::int64_t value);
    static Cell number_cell(double value, int decimals);

private:
    std::vector<Column> columns_;
    std::vector<std::vector<Cell>> rows_;
};

// The crossover panel's table: each scheme at the current workload (step time, bound, admission,
// throughput, speedup, time to first token).
class SchemeTableModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit SchemeTableModel(QObject* parent = nullptr);
    // One row per scheme of `plan`, in plan order.
    void setResult(const PlanResult& plan);
};

// The checkpoint panel's table: CheckpointBudget per scheme, and the real size when known.
class CheckpointTableModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit CheckpointTableModel(QObject* parent = nullptr);
    // One row per scheme; with `actual_tensor_bytes` a column of predicted / opened.
    void setResult(const PlanResult& plan, std::optional<std::uint64_t> actual_tensor_bytes = std::nullopt);
};

// The memory panel's table: bytes per decode step and the KV budget with its deductions.
class MemoryTableModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit MemoryTableModel(QObject* parent = nullptr);
    // One row per scheme: its decode step's bytes and its admission.
    void setResult(const PlanResult& plan);

private:
    static Cell cache_cell(const std::vector<CacheLayerType>& types);
};

// The memory panel's what-if: max sequences and tokens/s per scheme for every KV format.
class KvWhatIfModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit KvWhatIfModel(QObject* parent = nullptr);
    // One row per KV format, two columns per scheme.
    void setResult(const KvWhatIf& what_if);
};

// The decision panel's ranking (Decision::ranking, in rank order).
class RankingModel : public ResultTableModel {
    Q_OBJECT
public:
    explicit RankingModel(QObject* parent = nullptr);
    // One row per ranked scheme; the value column is tokens/s or ms per step as `goal` ranks.
    void setResult(const Decision& decision, Goal goal);
};

// A model as CSV text (RFC 4180: comma-separated, CRLF lines, fields with commas, quotes or line
// breaks quoted): a header row of the horizontal headers, then kExportRole values (DisplayRole
// where a model has none), numbers with full precision.
QString table_csv(const QAbstractItemModel& model);

// Writes table_csv(model) to `path` atomically. Throws Error naming the path.
void save_table_csv(const QAbstractItemModel& model, const QString& path);

}  // namespace quantplan::ui

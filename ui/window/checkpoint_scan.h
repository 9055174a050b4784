#pragma once
// Opening a checkpoint folder in the window: core's inspector (core/checkpoint/inspector.h) reads
// config.json, the quantization config and every safetensors header (never a payload) and compares
// what the checkpoint declares with what it holds. The window keeps the summary below: the
// architecture to plan, the declared scheme, and the real size to draw on the checkpoint chart.
// Runs as a BackgroundJob: a folder of hundreds of shards on a network disk is slow.
#include <cstdint>
#include <optional>

#include <QtCore/QString>
#include <QtCore/QStringList>

#include "core/model/model.h"
#include "ui/window/background_job.h"

namespace quantplan::ui {

// Most inspector findings (mismatches, errors, warnings) the window lists; the rest are counted.
inline constexpr int kMaxListedFindings = 4;

// What a checkpoint folder holds, as far as the window needs it (from the inspector's report).
struct CheckpointScan {
    QString folder;
    std::optional<ModelConfig> config;   // from config.json, when present and valid
    QString config_error;                // why there is no architecture ("" when fine)
    QString declared_method;             // quantization method as declared ("" none)
    QString declared_scheme;             // quantplan's name of the first quantization rule's scheme ("" none)
    QString declared_description;        // that rule in words, e.g. "int4 g128 zero point, AutoAWQ GEMM"
    std::int64_t safetensors_files = 0;
    bool compared = false;               // headers were read: the actual bytes exist
    std::uint64_t file_bytes = 0;        // sum of the files' sizes
    std::uint64_t header_bytes = 0;      // 8-byte length prefixes plus JSON headers
    std::uint64_t actual_tensor_bytes = 0;     // sum over stored tensors (what checkpoint_bytes predicts)
    std::uint64_t predicted_tensor_bytes = 0;  // the inspector's prediction for the declared config
    std::int64_t mismatch_count = 0;     // differences larger than the header bytes
    QStringList findings;                // errors, then mismatches, then warnings, at most kMaxListedFindings
    std::int64_t unlisted_findings = 0;  // findings beyond those

    // The bytes the checkpoint chart draws as the real size.
    std::uint64_t tensor_bytes() const { return actual_tensor_bytes; }
};

// Inspects `path` (a checkpoint folder, a config.json or a .safetensors file), reporting progress
// and honouring cancellation between reading and comparing. Throws Error when the path does not
// exist or is none of these; per-file problems become findings.
CheckpointScan scan_checkpoint(const QString& path, JobContext& context);

}  // namespace quantplan::ui

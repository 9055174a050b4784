#pragma once
// Opening a checkpoint folder in the window: its config.json (the architecture) and the real size
// of its safetensors files, split into tensor bytes and JSON headers. This reads 8 bytes of each
// file, not the tensors; the full inspector (core/checkpoint/) will replace the size part when it
// lands. Runs as a BackgroundJob: a folder of hundreds of shards on a network disk is slow.
#include <cstdint>
#include <optional>

#include <QtCore/QString>

#include "core/model.h"
#include "ui/window/background_job.h"

namespace quantplan::ui {

// The largest safetensors header accepted (the format's own reference loader refuses 100 MB).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// What a checkpoint folder holds, as far as the planner needs it.
struct CheckpointScan {
    QString folder;
    std::optional<ModelConfig> config;        // from config.json, when present and valid
    QString config_error;                     // why config.json could not be used ("" when fine)
    std::int64_t safetensors_files = 0;
    std::uint64_t file_bytes = 0;             // sum of the files' sizes
    std::uint64_t header_bytes = 0;           // 8-byte length prefixes plus JSON headers
    std::uint64_t tensor_bytes() const { return file_bytes - header_bytes; }  // the checkpoint_bytes comparable
};

// Scans `folder` (a checkpoint directory, or a config.json whose directory is scanned). Reports
// progress per file and honours cancellation. Throws Error when the folder cannot be listed or a
// file is not a safetensors file.
CheckpointScan scan_checkpoint(const QString& folder, JobContext& context);

}  // namespace quantplan::ui

#include "ui/window/checkpoint_scan.h"

#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QtEndian>

#include "core/error.h"
#include "core/model_config_json.h"

namespace quantplan::ui {

CheckpointScan scan_checkpoint(const QString& path, JobContext& context) {
    const QFileInfo info(path);
    const QString folder = info.isDir() ? info.absoluteFilePath() : info.absolutePath();
    QDir dir(folder);
    if (!dir.exists()) throw Error(path.toStdString(), "is not a folder");
    CheckpointScan scan;
    scan.folder = folder;
    context.report(0, QStringLiteral("reading config.json"));
    if (dir.exists(QStringLiteral("config.json"))) {
        try {
            scan.config = load_model_config(dir.filePath(QStringLiteral("config.json")).toStdString());
        } catch (const Error& e) {
            scan.config_error = QString::fromUtf8(e.what());
        }
    } else {
        scan.config_error = QStringLiteral("no config.json in %1").arg(folder);
    }
    const QFileInfoList files = dir.entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files, QDir::Name);
    scan.safetensors_files = files.size();
    for (qsizetype i = 0; i < files.size(); ++i) {
        context.check_cancelled();
        const QFileInfo& f = files.at(i);
        context.report(static_cast<int>(100 * i / files.size()), QStringLiteral("reading %1").arg(f.fileName()));
        QFile file(f.absoluteFilePath());
        if (!file.open(QIODevice::ReadOnly))
            throw Error(f.absoluteFilePath().toStdString(), "cannot be read: " + file.errorString().toStdString());
        const QByteArray prefix = file.read(8);
        if (prefix.size() != 8) throw Error(f.absoluteFilePath().toStdString(), "is shorter than a safetensors header");
        const std::uint64_t header_bytes = qFromLittleEndian<quint64>(prefix.constData());
        const auto size = static_cast<std::uint64_t>(f.size());
        if (header_bytes > kMaxSafetensorsHeaderBytes || header_bytes + 8 > size)
            throw Error(f.absoluteFilePath().toStdString(),
                        "declares a " + std::to_string(header_bytes) + "-byte header in a " + std::to_string(size) + "-byte file");
        scan.file_bytes += size;
        scan.header_bytes += header_bytes + 8;
    }
    context.report(100, QStringLiteral("%1 safetensors files").arg(files.size()));
    return scan;
}

}  // namespace quantplan::ui

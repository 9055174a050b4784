// Offscreen rendering of charts to PNG and SVG, and the series lookup of charts.h.
#include <exception>
#include <filesystem>
#include <string_view>

#include <QtCharts/QAbstractSeries>
#include <QtCore/QBuffer>
#include <QtGui/QImage>
#include <QtGui/QPainter>
#include <QtSvg/QSvgGenerator>
#include <QtWidgets/QGraphicsScene>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "ui/charts/charts.h"

namespace quantplan::ui {
namespace {

// Paints `chart` onto `painter` over `size`. A chart shown in a view keeps its geometry and is
// scaled; a free chart is laid out at `size` in a temporary scene and taken out again.
void paint_chart(QChart* chart, QPainter& painter, QSize size) {
    const QRectF target(0, 0, size.width(), size.height());
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    if (QGraphicsScene* shown = chart->scene()) {
        shown->render(&painter, target, chart->sceneBoundingRect(), Qt::IgnoreAspectRatio);
        return;
    }
    QGraphicsScene scene;
    scene.addItem(chart);
    chart->setPos(0, 0);
    chart->resize(target.size());
    scene.setSceneRect(target);
    scene.render(&painter, target, target, Qt::IgnoreAspectRatio);
    scene.removeItem(chart);
}

bool valid(const QChart* chart, QSize size) { return chart != nullptr && size.width() > 0 && size.height() > 0; }

bool write_bytes(const QString& path, const QByteArray& bytes) {
    if (bytes.isEmpty()) return false;
    try {
        write_file_atomically(std::filesystem::path(path.toStdString()),
                              std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace

QAbstractSeries* find_series(const QChart* chart, const QString& name) {
    if (chart == nullptr) return nullptr;
    for (QAbstractSeries* series : chart->series())
        if (series->name() == name) return series;
    return nullptr;
}

QByteArray render_chart_png(QChart* chart, QSize size) {
    if (!valid(chart, size)) return {};
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        paint_chart(chart, painter, size);
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) return {};
    return bytes;
}

QByteArray render_chart_svg(QChart* chart, QSize size) {
    if (!valid(chart, size)) return {};
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    generator.setTitle(chart->title());
    generator.setDescription(QStringLiteral("quantplan chart"));
    {
        QPainter painter;
        if (!painter.begin(&generator)) return {};
        painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
        paint_chart(chart, painter, size);
        painter.end();
    }
    // QSvgGenerator states width and height in millimetres at its resolution, which a browser
    // reads at 96 dpi and scales; the report wants `size` CSS pixels, so the root element's
    // width and height are restated in pixels (the viewBox already is).
    const qsizetype root = bytes.indexOf("<svg");
    const qsizetype root_end = root < 0 ? -1 : bytes.indexOf("viewBox", root);
    if (root < 0 || root_end < 0) return {};
    const QByteArray head = QByteArray("<svg width=\"") + QByteArray::number(size.width()) + "\" height=\"" +
                            QByteArray::number(size.height()) + "\"\n ";
    bytes.replace(root, root_end - root, head);
    return bytes;
}

bool save_chart_png(QChart* chart, const QString& path, QSize size) { return write_bytes(path, render_chart_png(chart, size)); }

bool save_chart_svg(QChart* chart, const QString& path, QSize size) { return write_bytes(path, render_chart_svg(chart, size)); }

}  // namespace quantplan::ui

#pragma once
// Screenshots for reports and tests: the whole window or one view, saved atomically as PNG.
#include <QImage>
#include <QString>

namespace medseg::studio {

class MainWindow;

// Shows the window, lets it lay out and render, then grabs `view` ("all", "axial", "coronal",
// "sagittal" or "3d"). Throws std::runtime_error on an unknown view or a failed write.
QImage grabView(MainWindow& window, const QString& view);
void saveScreenshot(MainWindow& window, const QString& view, const QString& path);

}  // namespace medseg::studio

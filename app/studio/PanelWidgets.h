#pragma once
// Small pieces the panels share: a path field with its browse button, durations as text.
#include <QString>

class QLineEdit;
class QWidget;

namespace medseg::studio {

// `edit` in a row with a "…" button opening a folder or file dialog (file dialogs use `filter`).
QWidget* withBrowseButton(QLineEdit* edit, bool directory, const QString& filter, QWidget* parent);
QString formatDuration(double seconds);  // "m:ss" or "h:mm:ss"; "–" when unknown (negative)

}  // namespace medseg::studio

// Where plugins may come from: the install's plugin folder (beside the executable) and absolute
// MEDSEG_PLUGIN_PATH entries only, never the current folder or a relative entry; and a file that is
// not a MedSeg plugin is listed with the reason and skipped, never loaded.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

#include "core/plugin/PluginManager.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;

fs::path executableFolder() { return fs::read_symlink("/proc/self/exe").parent_path(); }

// The real plugins of this build tree (bin/plugins beside the test program).
std::vector<fs::path> builtPlugins() {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(executableFolder() / "plugins", ec))
    if (entry.path().extension() == ".so") found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Runs in `folder` for one test, so a loader that looked at "." would find the planted plugin.
class ScopedCurrentFolder {
 public:
  explicit ScopedCurrentFolder(const fs::path& folder) : old_(fs::current_path()) { fs::current_path(folder); }
  ~ScopedCurrentFolder() { fs::current_path(old_); }

 private:
  fs::path old_;
};

bool insideFolder(const fs::path& file, const fs::path& folder) {
  const auto a = fs::weakly_canonical(folder), b = fs::weakly_canonical(file);
  return std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first == a.end();
}

TEST(PluginManager, SearchesTheInstallFolderThenAbsolutePluginPathEntriesOnly) {
  ScopedEnv env("MEDSEG_PLUGIN_PATH", "/opt/site/plugins:relative/plugins::./here:.:/srv/more");
  std::vector<std::string> warnings;
  const auto folders = PluginManager::searchPath(&warnings);
  const fs::path bin = executableFolder();
  const std::vector<fs::path> expected{bin.parent_path() / "lib" / "medseg" / "plugins", bin / "plugins",
                                       "/opt/site/plugins", "/srv/more"};
  EXPECT_EQ(folders, expected);
  ASSERT_EQ(warnings.size(), 3u);
  for (const std::string entry : {"relative/plugins", "./here", "\".\""}) {
    const bool named = std::any_of(warnings.begin(), warnings.end(),
                                   [&](const std::string& w) { return w.find(entry) != std::string::npos; });
    EXPECT_TRUE(named) << entry;
  }
  EXPECT_NE(warnings.front().find("relative"), std::string::npos) << warnings.front();
}

TEST(PluginManager, NeverLoadsFromTheCurrentFolderOrRelativeEntries) {
  const auto plugins = builtPlugins();
  if (plugins.empty()) GTEST_SKIP() << "no plugins built in " << executableFolder() / "plugins";
  test::ScratchDir scratch("plugin-cwd");
  fs::create_directories(scratch / "plugins");
  for (const auto& plugin : plugins) {
    fs::copy_file(plugin, scratch / plugin.filename());
    fs::copy_file(plugin, scratch / "plugins" / plugin.filename());
  }
  ScopedCurrentFolder cwd(scratch.path());
  ScopedEnv env("MEDSEG_PLUGIN_PATH", "plugins:.:./plugins");
  PluginManager manager;
  manager.loadAll();
  EXPECT_EQ(manager.warnings().size(), 3u);
  for (const PluginRecord& record : manager.plugins())
    EXPECT_FALSE(insideFolder(record.file, scratch.path())) << record.file << " was picked up from the current folder";
  // The build tree's own plugins are still found, through the folder beside the executable.
  EXPECT_FALSE(manager.plugins().empty());
}

TEST(PluginManager, LoadsFromAbsolutePluginPathAndSkipsFilesThatAreNotPlugins) {
  test::ScratchDir scratch("plugin-path");
  const fs::path folder = scratch / "site-plugins";
  fs::create_directories(folder);
  std::ofstream(folder / "garbage.so", std::ios::binary) << "\x7f" "ELF but not really, just bytes";
  std::ofstream(folder / "empty.so");
  // A real shared library that is not a Qt plugin.
  const fs::path library = executableFolder().parent_path() / "lib" / "libmedseg_core.so";
  ASSERT_TRUE(fs::exists(library)) << library;
  fs::copy_file(library, folder / "libnotaplugin.so");
  std::ofstream(folder / "README.txt") << "not a library, not even looked at";
  const auto plugins = builtPlugins();
  if (!plugins.empty()) fs::copy_file(plugins.front(), folder / ("copy-" + plugins.front().filename().string()));

  PluginManager manager;
  manager.loadFolder(folder);
  std::map<std::string, const PluginRecord*> byFile;
  for (const PluginRecord& record : manager.plugins()) byFile[record.file.filename().string()] = &record;
  EXPECT_EQ(byFile.count("README.txt"), 0u);
  for (const char* broken : {"garbage.so", "empty.so", "libnotaplugin.so"}) {
    ASSERT_EQ(byFile.count(broken), 1u) << broken;
    EXPECT_FALSE(byFile[broken]->loaded) << broken;
    EXPECT_NE(byFile[broken]->error.find("not a Qt plugin"), std::string::npos) << broken << ": " << byFile[broken]->error;
  }
  if (!plugins.empty()) {
    const std::string copy = "copy-" + plugins.front().filename().string();
    ASSERT_EQ(byFile.count(copy), 1u);
    EXPECT_TRUE(byFile[copy]->loaded) << byFile[copy]->error;
  }
  // The same through MEDSEG_PLUGIN_PATH: the broken files are reported, nothing throws.
  ScopedEnv env("MEDSEG_PLUGIN_PATH", folder.string());
  PluginManager fromPath;
  EXPECT_NO_THROW(fromPath.loadAll());
  EXPECT_TRUE(std::any_of(fromPath.plugins().begin(), fromPath.plugins().end(),
                          [](const PluginRecord& r) { return r.file.filename() == "garbage.so" && !r.loaded; }));
}

}  // namespace
}  // namespace medseg

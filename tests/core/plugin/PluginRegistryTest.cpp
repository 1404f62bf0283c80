// The plugin registry (core/plugin/PluginRegistry.h) against the plugins this build made and broken
// copies of them: every refusal names the plugin, both sides or the loader's reason, and the fix, and
// never stops the other plugins from loading.
#include <gtest/gtest.h>

#include <fstream>

#include "core/plugin/PluginRegistry.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::plugin {
namespace {

namespace fs = std::filesystem;

const fs::path kBuilt = MEDSEG_PLUGIN_DIR;  // lib/medseg/plugins of this build

nlohmann::json manifestOf(const fs::path& folder) { return nlohmann::json::parse(readTextFile(folder / "manifest.json")); }

// A copy of the built region-growing plugin under `id`, its manifest changed by `edit`.
fs::path copyPlugin(const fs::path& root, const std::string& id, const std::function<void(nlohmann::json&)>& edit) {
  const fs::path folder = root / id;
  fs::create_directories(folder);
  fs::copy_file(kBuilt / "region-growing" / "libregion-growing.so", folder / "libregion-growing.so");
  nlohmann::json manifest = manifestOf(kBuilt / "region-growing");
  manifest["id"] = id;
  edit(manifest);
  writeFileAtomically(folder / "manifest.json", manifest.dump(2));
  return folder;
}

TEST(PluginRegistry, FindsTheBuiltPluginsWithTheirKindsAndVersions) {
  PluginRegistry registry({kBuilt});
  for (const char* id : {"unet3d", "torchscript", "region-growing"}) {
    const PluginEntry* entry = registry.find(id);
    ASSERT_NE(entry, nullptr) << id;
    EXPECT_EQ(entry->state, PluginState::Read) << entry->reason;
    EXPECT_EQ(entry->manifest.api.text(), ApiVersion{}.text());
    EXPECT_FALSE(entry->manifest.version.empty());
  }
  EXPECT_TRUE(registry.find("unet3d")->manifest.has(PluginKind::Train));
  EXPECT_FALSE(registry.find("torchscript")->manifest.has(PluginKind::Train));
  EXPECT_TRUE(registry.find("region-growing")->manifest.capabilities.takesSeedPoints());
  // Loading checks the object against the manifest; the ITK plugin links no LibTorch.
  Plugin& plugin = registry.load("region-growing");
  EXPECT_EQ(plugin.id(), "region-growing");
  EXPECT_NE(plugin.inference(), nullptr);
  EXPECT_EQ(plugin.training(), nullptr);
  EXPECT_TRUE(registry.find("region-growing")->manifest.abi.libtorch.empty());
  // The plugin that runs MPI collectives records the host's MPI; the one that does not records none.
  EXPECT_EQ(registry.find("unet3d")->manifest.abi.mpi, hostAbi().mpi);
  EXPECT_FALSE(hostAbi().mpi.empty());
  EXPECT_TRUE(registry.find("region-growing")->manifest.abi.mpi.empty());
  EXPECT_EQ(registry.find("region-growing")->state, PluginState::Loaded);
}

TEST(PluginRegistry, RefusesOtherApiOrAbiBeforeOpeningAndLoadsTheRest) {
  test::ScratchDir dir("registry-refusals");
  copyPlugin(dir.path(), "future-api", [](nlohmann::json& m) { m["api_version"] = "2.0"; });
  copyPlugin(dir.path(), "newer-minor", [](nlohmann::json& m) { m["api_version"] = "1.99"; });
  copyPlugin(dir.path(), "other-compiler", [](nlohmann::json& m) { m["abi"]["compiler"] = "Clang 99"; });
  copyPlugin(dir.path(), "other-torch", [](nlohmann::json& m) { m["abi"]["libtorch"] = "2.11.0"; });
  copyPlugin(dir.path(), "other-mpi", [](nlohmann::json& m) { m["abi"]["mpi"] = "MPICH 3.4"; });
  fs::create_directories(dir.path() / "broken-manifest");
  std::ofstream(dir.path() / "broken-manifest" / "manifest.json") << "{ not json";
  PluginRegistry registry({dir.path(), kBuilt});

  const PluginEntry& future = registry.entry("future-api");
  EXPECT_EQ(future.state, PluginState::Incompatible);
  EXPECT_NE(future.reason.find("plugin API 2.0"), std::string::npos) << future.reason;
  EXPECT_NE(future.reason.find("plugin API " + ApiVersion{}.text()), std::string::npos) << future.reason;
  EXPECT_NE(future.reason.find("rebuild the plugin against this MedSeg's SDK"), std::string::npos) << future.reason;
  EXPECT_EQ(registry.entry("newer-minor").state, PluginState::Incompatible);
  const PluginEntry& compiler = registry.entry("other-compiler");
  EXPECT_EQ(compiler.state, PluginState::Incompatible);
  EXPECT_NE(compiler.reason.find("Clang 99"), std::string::npos);
  EXPECT_NE(compiler.reason.find(hostAbi().compiler), std::string::npos);
  const PluginEntry& torch = registry.entry("other-torch");
  EXPECT_NE(torch.reason.find("LibTorch 2.11.0"), std::string::npos) << torch.reason;
  EXPECT_NE(torch.reason.find("LibTorch " + hostAbi().libtorch), std::string::npos) << torch.reason;
  const PluginEntry& mpi = registry.entry("other-mpi");
  EXPECT_EQ(mpi.state, PluginState::Incompatible);
  EXPECT_NE(mpi.reason.find("built against MPICH 3.4"), std::string::npos) << mpi.reason;
  // Refused, never loaded anyway; the error is the same reason.
  try {
    registry.load("future-api");
    ADD_FAILURE() << "an incompatible plugin was loaded";
  } catch (const PluginError& error) {
    EXPECT_EQ(std::string(error.what()), future.reason);
  }
  ASSERT_EQ(registry.problems().size(), 1u);
  EXPECT_EQ(registry.problems()[0].file, dir.path() / "broken-manifest" / "manifest.json");
  // The others are untouched.
  EXPECT_NO_THROW(registry.load("region-growing"));
  const auto usable = registry.usable(PluginKind::Infer);
  EXPECT_EQ(std::count_if(usable.begin(), usable.end(), [](const PluginEntry* e) { return e->manifest.id == "future-api"; }), 0);
}

TEST(PluginRegistry, ReportsLibrariesThatDoNotOpenOrAreNotPlugins) {
  test::ScratchDir dir("registry-libraries");
  // A real shared library without the entry points.
  const fs::path noEntry = copyPlugin(dir.path(), "no-entry", [](nlohmann::json& m) { m["library"] = "libnot-a-plugin.so"; });
  fs::copy_file(MEDSEG_NOT_A_PLUGIN_LIBRARY, noEntry / "libnot-a-plugin.so");
  // A file that is no library at all.
  const fs::path text = copyPlugin(dir.path(), "not-elf", [](nlohmann::json& m) { m["library"] = "libtext.so"; });
  std::ofstream(text / "libtext.so") << "this is not an ELF file\n";
  // A manifest whose library is missing, and one whose id differs from the library's plugin.
  copyPlugin(dir.path(), "missing-library", [](nlohmann::json& m) { m["library"] = "libnothere.so"; });
  copyPlugin(dir.path(), "wrong-id", [](nlohmann::json&) {});
  PluginRegistry registry({dir.path(), kBuilt});

  auto failure = [&](const std::string& id) {
    try {
      registry.load(id);
    } catch (const PluginError& error) {
      EXPECT_EQ(registry.entry(id).state, PluginState::Failed);
      return std::string(error.what());
    }
    ADD_FAILURE() << id << " loaded";
    return std::string();
  };
  const std::string noEntryReason = failure("no-entry");
  EXPECT_NE(noEntryReason.find((noEntry / "libnot-a-plugin.so").string()), std::string::npos) << noEntryReason;
  EXPECT_NE(noEntryReason.find("is not a MedSeg plugin"), std::string::npos) << noEntryReason;
  EXPECT_NE(noEntryReason.find("MEDSEG_PLUGIN"), std::string::npos) << noEntryReason;
  const std::string elf = failure("not-elf");
  EXPECT_NE(elf.find("cannot be opened"), std::string::npos) << elf;
  EXPECT_NE(elf.find("libtext.so"), std::string::npos) << elf;  // the loader's own reason follows
  EXPECT_NE(failure("missing-library").find("does not exist"), std::string::npos);
  EXPECT_NE(failure("wrong-id").find("says it is plugin \"region-growing\""), std::string::npos);
  // Failures stay recorded, and the rest still load.
  EXPECT_THROW(registry.load("no-entry"), PluginError);
  EXPECT_NO_THROW(registry.load("unet3d"));
  EXPECT_NO_THROW(registry.load("torchscript"));
}

TEST(PluginRegistry, SearchPathPutsGivenFoldersFirstAndFirstFoundWins) {
  test::ScratchDir dir("registry-order");
  copyPlugin(dir.path(), "region-growing", [](nlohmann::json& m) { m["version"] = "9.9.9"; });
  ::setenv("MEDSEG_PLUGIN_PATH", (dir.path().string() + ":/nonexistent").c_str(), 1);
  const auto folders = PluginRegistry::searchPath({"/given"});
  ::unsetenv("MEDSEG_PLUGIN_PATH");
  ASSERT_GE(folders.size(), 3u);
  EXPECT_EQ(folders[0], fs::path("/given"));
  EXPECT_EQ(folders[1], dir.path());
  PluginRegistry registry({dir.path(), kBuilt});
  EXPECT_EQ(registry.entry("region-growing").manifest.version, "9.9.9");
  ASSERT_EQ(registry.problems().size(), 1u);  // the built copy, found second, is named as unused
  EXPECT_NE(registry.problems()[0].reason.find("found first"), std::string::npos);
  EXPECT_THROW(registry.entry("no-such-plugin"), PluginError);
}

}  // namespace
}  // namespace medseg::plugin

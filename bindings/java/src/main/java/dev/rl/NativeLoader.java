package dev.rl;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Finds librl_jni.so, the native layer, in this order:
 *
 * <ol>
 *   <li>the system property {@code rl.jni.path}, an absolute path (the repository's build, whose
 *       librl_jni finds the build tree's librl.so.1 through its rpath);
 *   <li>the copy inside the jar ({@code dev/rl/native/linux-<os.arch>/librl_jni.so}), written to
 *       a temporary file and loaded from there. The jar of scripts/build-jar (Maven Central's)
 *       carries one for linux-amd64 and linux-aarch64 with librl linked in (glibc 2.34 or newer,
 *       nothing to install); a plain {@code mvn package} carries this machine's, built without an
 *       rpath, which links librl.so.1 by its SONAME (the librl1 package's).
 * </ol>
 */
final class NativeLoader {
  static final String PROPERTY = "rl.jni.path";

  private NativeLoader() {}

  /** The resource name of the jar's librl_jni for this JVM's architecture. */
  static String resource() {
    return "/dev/rl/native/linux-" + System.getProperty("os.arch") + "/librl_jni.so";
  }

  static void load() {
    String path = System.getProperty(PROPERTY);
    if (path != null && !path.isEmpty()) {
      System.load(path);
      return;
    }
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource())) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "librl_jni: this jar carries no native library for this platform ("
                + System.getProperty("os.name") + " " + System.getProperty("os.arch")
                + "; it looked for " + resource() + "; rl's release jar has linux-amd64 and"
                + " linux-aarch64); pass -D" + PROPERTY + "=/abs/path/to/librl_jni.so built for it");
      }
      Path file = Files.createTempFile("librl_jni", ".so");
      try {
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        System.load(file.toAbsolutePath().toString());
      } catch (UnsatisfiedLinkError e) {
        UnsatisfiedLinkError error =
            new UnsatisfiedLinkError(
                e.getMessage() + " (the jar's librl_jni for linux-" + System.getProperty("os.arch")
                    + " did not load: the release jar's needs glibc 2.34 or newer, that of a plain"
                    + " mvn package librl.so.1 installed, the librl1 package; or pass -D" + PROPERTY
                    + "=/abs/path/to/librl_jni.so)");
        error.initCause(e);
        throw error;
      } finally {
        Files.deleteIfExists(file); // the loaded library stays mapped
      }
    } catch (IOException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("librl_jni: " + e.getMessage());
      error.initCause(e);
      throw error;
    }
  }
}

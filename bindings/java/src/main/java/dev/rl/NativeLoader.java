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
 *   <li>the copy inside the jar ({@code dev/rl/native/linux-<arch>/librl_jni.so}, built without an
 *       rpath), written to a temporary file: it links librl.so.1 by its SONAME, so the dynamic
 *       loader takes the installed one (the librl1 package's, in /usr/lib/&lt;multiarch&gt;).
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
            "librl_jni: this jar has no " + resource() + " and " + PROPERTY
                + " is not set; pass -D" + PROPERTY + "=/abs/path/to/librl_jni.so");
      }
      Path file = Files.createTempFile("librl_jni", ".so");
      try {
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        System.load(file.toAbsolutePath().toString());
      } catch (UnsatisfiedLinkError e) {
        UnsatisfiedLinkError error =
            new UnsatisfiedLinkError(
                e.getMessage() + " (the jar's librl_jni needs librl.so.1 installed: the librl1"
                    + " package; or pass -D" + PROPERTY + "=/abs/path/to/librl_jni.so)");
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

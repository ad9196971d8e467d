package dev.rl.bench.frameworks.count;

import dev.rl.bench.frameworks.grpc.GrpcBench;
import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * bench/frameworks/spring/count's two sides: counts, not timings, of what one request of each
 * route (/bare, /limited, /store) costs the app's process, so that they hold on a busy machine.
 *
 * <pre>
 * Count serve APP_CLASS      runs the app in this JVM, and a control socket ("control PORT") whose
 *                            every line is answered with the heap bytes all threads allocated so far
 * Count drive http|grpc SERVER_PID APP_PORT CONTROL_PORT REQUESTS
 *                            per route: a warm-up, then REQUESTS requests (fresh keys, one
 *                            connection) with perf stat on the server process
 * </pre>
 */
public final class Count {
  private Count() {}

  public static void main(String[] args) throws Exception {
    if (args[0].equals("serve")) serve(args[1]);
    else drive(args);
  }

  // ---- server side

  private static void serve(String app) throws Exception {
    ServerSocket control = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    System.out.println("control " + control.getLocalPort());
    Thread t =
        new Thread(
            () -> {
              try {
                Class.forName(app).getMethod("main", String[].class).invoke(null, (Object) new String[0]);
              } catch (ReflectiveOperationException e) {
                e.printStackTrace();
                System.exit(1);
              }
            },
            "app-main");
    t.start();
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    try (Socket s = control.accept();
        BufferedReader in =
            new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(s.getOutputStream(), true)) {
      long self = Thread.currentThread().getId();
      while (in.readLine() != null) {
        // One line per thread ("id name-without-numbers bytes"), then an empty line.
        long[] ids = threads.getAllThreadIds();
        long[] bytes = threads.getThreadAllocatedBytes(ids);
        java.lang.management.ThreadInfo[] infos = threads.getThreadInfo(ids);
        StringBuilder answer = new StringBuilder();
        for (int i = 0; i < ids.length; i++) {
          if (ids[i] == self || bytes[i] <= 0 || infos[i] == null) continue;
          String name = infos[i].getThreadName().replaceAll("[0-9]+", "#").replace(' ', '_');
          answer.append(ids[i]).append(' ').append(name).append(' ').append(bytes[i]).append('\n');
        }
        out.println(answer);
      }
    }
    System.exit(0);
  }

  // ---- client side

  interface Client {
    void call(String route, String key) throws Exception;
  }

  private static void drive(String[] args) throws Exception {
    String kind = args[1];
    long pid = Long.parseLong(args[2]);
    int port = Integer.parseInt(args[3]);
    int controlPort = Integer.parseInt(args[4]);
    int requests = Integer.parseInt(args[5]);
    Client client = kind.equals("grpc") ? grpc(port) : new Http(port);
    try (Socket control = new Socket(InetAddress.getLoopbackAddress(), controlPort)) {
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(control.getInputStream(), StandardCharsets.UTF_8));
      PrintWriter out = new PrintWriter(control.getOutputStream(), true);
      String[] routes = {"bare", "limited", "store"};
      for (int round = 0; round < 3; round++) { // warm-up: every route, JIT-compiled
        for (String route : routes) {
          for (int i = 0; i < requests; i++) client.call(route, "w" + round + route + i);
        }
      }
      Map<String, String> names = threadNames(pid);
      for (String route : routes) {
        Path stat = Files.createTempFile("count", ".stat");
        Process perf =
            new ProcessBuilder(
                    "perf", "stat", "--per-thread", "-x;", "-o", stat.toString(),
                    "-e", "context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_futex",
                    "-p", Long.toString(pid))
                .inheritIO()
                .start();
        Thread.sleep(500); // attached (a late start only drops counts)
        Map<String, String[]> before = allocated(in, out);
        for (int i = 0; i < requests; i++) client.call(route, route.charAt(0) + Integer.toString(i));
        Map<String, String[]> after = allocated(in, out);
        new ProcessBuilder("kill", "-INT", Long.toString(perf.pid())).start().waitFor();
        perf.waitFor();
        // per thread (a thread started meanwhile counts from 0), and in all
        Map<String, Long> heap = new TreeMap<>();
        long all = 0;
        for (Map.Entry<String, String[]> t : after.entrySet()) {
          String[] was = before.get(t.getKey());
          long bytes = Long.parseLong(t.getValue()[1]) - (was == null ? 0 : Long.parseLong(was[1]));
          heap.merge(t.getValue()[0], bytes, Long::sum);
          all += bytes;
        }
        System.out.printf(
            Locale.ROOT, "%-8s heap bytes %10.0f per request%n", route, all / (double) requests);
        heap.forEach(
            (thread, bytes) -> {
              if (bytes >= 10L * requests) {
                System.out.printf(
                    Locale.ROOT, "           %-28s heap bytes %8.0f%n", thread, bytes / (double) requests);
              }
            });
        // per thread (names without their numbers), and in all, per request
        Map<String, double[]> byThread = new TreeMap<>();
        double[] total = new double[3];
        for (String line : Files.readAllLines(stat)) {
          String[] f = line.split(";");
          if (f.length < 4 || !f[1].matches("[0-9]+")) continue;
          String tid = f[0].replaceAll("^.*-", "");
          String thread = names.getOrDefault(tid, f[0].replaceAll("-[0-9]+$", "") + " (native)");
          thread = thread.replaceAll("[0-9]+", "#");
          int event = f[3].startsWith("context") ? 0 : f[3].startsWith("raw") ? 1 : 2;
          double n = Long.parseLong(f[1]) / (double) requests;
          byThread.computeIfAbsent(thread, t -> new double[3])[event] += n;
          total[event] += n;
        }
        System.out.printf(
            Locale.ROOT,
            "%-8s context switches %6.2f  syscalls %6.2f  futex %6.2f per request%n",
            route, total[0], total[1], total[2]);
        byThread.forEach(
            (thread, n) -> {
              if (n[0] >= 0.05 || n[1] >= 0.05) {
                System.out.printf(
                    Locale.ROOT, "           %-28s cs %6.2f  sys %6.2f  futex %6.2f%n", thread, n[0], n[1], n[2]);
              }
            });
        Files.delete(stat);
      }
    }
    System.exit(0);
  }

  /** The server's heap bytes so far by thread id: {name, bytes}. */
  private static Map<String, String[]> allocated(BufferedReader in, PrintWriter out)
      throws IOException {
    out.println("alloc");
    Map<String, String[]> threads = new java.util.HashMap<>();
    for (String line; !(line = in.readLine()).isEmpty(); ) {
      String[] f = line.split(" ");
      threads.put(f[0], new String[] {f[1], f[2]});
    }
    return threads;
  }

  /**
   * The server's Java thread names by native thread id (jcmd's nid); perf names a thread only by
   * its first 15 characters. rl's own I/O thread is no Java thread until a completion attached it
   * ("rl-callback"): before, it has the name of the thread that started it.
   */
  private static Map<String, String> threadNames(long pid) throws Exception {
    Process jcmd = new ProcessBuilder("jcmd", Long.toString(pid), "Thread.print").start();
    Map<String, String> names = new java.util.HashMap<>();
    java.util.regex.Pattern line = java.util.regex.Pattern.compile("^\"([^\"]*)\".* nid=(0x[0-9a-f]+|[0-9]+) .*");
    for (String l : new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
      java.util.regex.Matcher m = line.matcher(l);
      if (m.matches()) names.put(Long.toString(Long.decode(m.group(2))), m.group(1));
    }
    jcmd.waitFor();
    return names;
  }

  private static Client grpc(int port) {
    ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    Map<String, MethodDescriptor<byte[], byte[]>> methods =
        Map.of(
            "bare", GrpcBench.method("Bare"),
            "limited", GrpcBench.method("Limited"),
            "store", GrpcBench.method("Store"));
    return (route, key) -> {
      Metadata md = new Metadata();
      md.put(GrpcBench.API_KEY, key);
      ClientCalls.blockingUnaryCall(
          ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md)),
          methods.get(route),
          CallOptions.DEFAULT,
          key.getBytes(StandardCharsets.UTF_8));
    };
  }

  /** HTTP/1.1 on one keep-alive connection (a new one when the server closes it). */
  private static final class Http implements Client {
    private final int port;
    private Socket socket;
    private InputStream in;
    private OutputStream out;

    Http(int port) {
      this.port = port;
    }

    @Override
    public void call(String route, String key) throws IOException {
      if (socket == null) {
        socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setTcpNoDelay(true);
        in = new java.io.BufferedInputStream(socket.getInputStream());
        out = socket.getOutputStream();
      }
      out.write(
          ("GET /" + route + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: " + key + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      int length = -1;
      boolean chunked = false, close = false;
      String status = line();
      if (!status.contains(" 200 ")) throw new IOException("/" + route + ": " + status);
      for (String h; !(h = line()).isEmpty(); ) {
        String lower = h.toLowerCase(Locale.ROOT);
        if (lower.startsWith("content-length:")) length = Integer.parseInt(lower.substring(15).trim());
        if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) chunked = true;
        if (lower.startsWith("connection:") && lower.contains("close")) close = true;
      }
      if (chunked) {
        for (int n; (n = Integer.parseInt(line().trim(), 16)) > 0; ) {
          in.readNBytes(n);
          line();
        }
        line();
      } else if (length >= 0) {
        in.readNBytes(length);
      }
      if (close) {
        socket.close();
        socket = null;
      }
    }

    private String line() throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      for (int c; (c = in.read()) != '\n'; ) {
        if (c < 0) throw new IOException("connection closed");
        if (c != '\r') b.write(c);
      }
      return b.toString(StandardCharsets.US_ASCII);
    }
  }
}

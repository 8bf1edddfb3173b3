// Starts mongo-java-server (de.bwaldvogel) on 127.0.0.1:<port> with the H2 backend (an MVStore file
// on disk) or the memory backend, for the measurement in ADR 0001. Not part of the local stack.
//
//   java -cp '.local/mongo-java-server/classes:.local/mongo-java-server/lib/*' Main <port> h2 <file>
//   java -cp ... Main <port> memory
//
// Started through run.sh, which fetches the jars and compiles this file.
import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.ServerVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

public final class Main {
  public static void main(String[] args) {
    if (args.length < 2 || !(args[1].equals("memory") || (args[1].equals("h2") && args.length == 3))) {
      System.err.println("usage: Main <port> memory | Main <port> h2 <file>");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    MongoBackend backend = args[1].equals("h2") ? new H2Backend(args[2]) : new MemoryBackend();
    // The newest wire version it offers; the Node driver 6 needs at least 3.6 (wire version 6).
    backend.version(ServerVersion.MONGO_5_0);
    MongoServer server = new MongoServer(backend);
    try {
      server.bind("127.0.0.1", port);
    } catch (Exception e) {
      // A taken port (netty rethrows the BindException unchecked); netty's threads would keep the
      // JVM alive.
      System.err.println("cannot listen on 127.0.0.1:" + port + ": " + e);
      server.shutdownNow();
      System.exit(1);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown));
    System.out.println("mongo-java-server (" + args[1] + ") listening on 127.0.0.1:" + port);
  }
}

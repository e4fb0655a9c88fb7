@0xcc81a4f22f8c539c;
# Test-only interface for the RPC bridge tests (test/unit/rpc_bridge_test.cpp); never deployed.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("cairn::test_rpc");

interface TestBridge {
  echo @0 (text :Text) -> (text :Text);

  # Who the server thinks is calling (the PeerInfo of this connection).
  whoAmI @1 () -> (localSocket :Bool, uid :UInt32, gid :UInt32, pid :Int32, address :Text);

  # Answered by a thread other than the kj loop thread (a stand-in for a CAF actor).
  square @2 (value :Int64) -> (result :Int64);

  # Never answered: for client timeouts.
  hang @3 () -> ();

  # Fails with the given message: for error reporting.
  fail @4 (message :Text) -> ();

  # Not implemented by the test server: a method newer than the server.
  newer @5 () -> ();
}

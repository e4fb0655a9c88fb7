// java -cp 'KAFKA_LIBS/*' KafkaGrantTransactionalId.java BOOTSTRAP PRINCIPAL TRANSACTIONAL_ID [key=value]...
// allows PRINCIPAL Write and Describe on TRANSACTIONAL_ID (Kafka's Admin API, as the
// key=value principal: a super user), for the ACL test. librdkafka 2.0.2's admin API has
// no TransactionalId resource type, hence Java, which the broker needs anyway.
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

public class KafkaGrantTransactionalId {
  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: KafkaGrantTransactionalId BOOTSTRAP PRINCIPAL TRANSACTIONAL_ID [key=value]...");
      System.exit(2);
    }
    Properties properties = new Properties();
    properties.put("bootstrap.servers", args[0]);
    for (int i = 3; i < args.length; ++i) {
      int eq = args[i].indexOf('=');
      if (eq < 0) {
        System.err.println("KafkaGrantTransactionalId: bad property " + args[i]);
        System.exit(2);
      }
      properties.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    ResourcePattern id = new ResourcePattern(ResourceType.TRANSACTIONAL_ID, args[2], PatternType.LITERAL);
    List<AclBinding> bindings = List.of(
        new AclBinding(id, new AccessControlEntry(args[1], "*", AclOperation.WRITE, AclPermissionType.ALLOW)),
        new AclBinding(id, new AccessControlEntry(args[1], "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW)));
    try (Admin admin = Admin.create(properties)) {
      admin.createAcls(bindings).all().get();
    }
  }
}

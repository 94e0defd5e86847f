// Prints, for each line of Int keys on stdin, the order in which the Scala library on the
// class path visits `keys.groupBy(identity)` and `keys.toSet` (foreach), and the class of
// the groupBy result. Run by make_scala_orders.py, once per scala-library jar; compiles
// against 2.12 and 2.13 alike (only methods both lines have: ::, groupBy, toSet, foreach).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;

public class ScalaOrders {
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.trim().split("\\s+");
            scala.collection.immutable.List list = scala.collection.immutable.List$.MODULE$.empty();
            for (int i = parts.length - 1; i >= 0; i--) {
                list = list.$colon$colon(Integer.valueOf(parts[i]));
            }
            scala.Function1 identity = x -> x;
            scala.collection.immutable.Map grouped =
                (scala.collection.immutable.Map) list.groupBy(identity);
            ArrayList<Object> keys = new ArrayList<>();
            grouped.foreach((scala.Function1) kv -> {
                keys.add(((scala.Tuple2) kv)._1());
                return null;
            });
            scala.collection.immutable.Set set = (scala.collection.immutable.Set) list.toSet();
            ArrayList<Object> elems = new ArrayList<>();
            set.foreach((scala.Function1) e -> {
                elems.add(e);
                return null;
            });
            System.out.println(join(keys) + "|" + join(elems) + "|"
                + grouped.getClass().getSimpleName());
        }
    }

    private static String join(ArrayList<Object> xs) {
        StringBuilder sb = new StringBuilder();
        for (Object x : xs) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(x);
        }
        return sb.toString();
    }
}

// The minimal bot of spec/PROTOCOL.md section 12, in Java: for the sandbox's tests of engines
// set up the ordinary way (a JVM from the system, classes in a folder of their own).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Minimal {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        Map<String, String> position = new HashMap<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            if (words[0].isEmpty()) {
                continue;
            }
            switch (words[0]) {
                case "gin":
                    System.out.print("id name MinimalJava\nginok protocol 1\n");
                    break;
                case "isready":
                    System.out.print("readyok\n");
                    break;
                case "position":
                    List<String> fields = new ArrayList<>();
                    for (int i = 1; i < words.length; i++) {
                        if (!words[i].contains("=")) {
                            fields.add(words[i]);
                        }
                    }
                    position.clear();
                    for (int i = 0; i + 1 < fields.size(); i += 2) {
                        position.put(fields.get(i), fields.get(i + 1));
                    }
                    break;
                case "go":
                    String phase = position.get("phase");
                    if ("offer".equals(phase)) {
                        System.out.print("move pass\n");
                    } else if ("draw".equals(phase)) {
                        System.out.print("move stock\n");
                    } else {
                        String[] history = position.get("history").split(",");
                        String[] last = history[history.length - 1].split(":");
                        boolean took = last.length > 2 && (last[1].equals("take") || last[1].equals("pile"));
                        String taken = took ? last[2] : null;
                        for (String card : position.get("cards").split(",")) {
                            if (!card.equals(taken)) {
                                System.out.print("move discard " + card + "\n");
                                break;
                            }
                        }
                    }
                    break;
                case "quit":
                    System.out.flush();
                    return;
                default:
                    break;
            }
            System.out.flush();
        }
    }
}
